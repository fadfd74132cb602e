/**
 * The node's side of Reset: consent in two phases, checked here. The first
 * call names what would be wiped (the provisioner's record matched against
 * the disk's table: {@link resetTargets}) and issues a challenge bound to the
 * node, its boot id, that set and an expiry; only a call echoing a challenge
 * that still holds starts the reset, once. A reset under way answers any
 * further call with its progress. Nothing here writes to a disk: the wipe
 * runs inside the shutdown sequence, after the volumes are unmounted.
 * @module
 */
import type {
  ActionRequester,
  ResetAnswer,
  ResetMode,
  ResetRequestData,
} from "../api/server/mod.ts";
import { ResetRefusedError } from "../api/server/mod.ts";
import { type RecordOnDisk, type ResetTarget, resetTargets } from "../controllers/block/mod.ts";
import type { BlockBackend } from "../platform/block/mod.ts";
import type { BootIdSource } from "../platform/identity/mod.ts";
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";
import type { MachineStore } from "../resources/mod.ts";
import { ChallengeError, ResetChallenger } from "./challenge.ts";

/** An accepted reset, for the sequence that carries it out. */
export interface ResetPlan {
  readonly mode: ResetMode;
  readonly powerOff: boolean;
  /** The record the targets were matched against (the wipe re-reads the table). */
  readonly record: RecordOnDisk;
  /** What the operator consented to. */
  readonly targets: readonly ResetTarget[];
  readonly by: ActionRequester;
}

/** What the coordinator needs. */
export interface ResetCoordinatorDeps {
  store: MachineStore;
  block: BlockBackend;
  bootId: BootIdSource;
  /** The node's name as the challenge binds it (its hostname). */
  node: () => string;
  events: EventBus;
  logger: Logger;
  /** Runs the reset (the shutdown sequence with a wipe); called at most once. */
  start: (plan: ResetPlan) => void;
  /** Why a reset cannot start now (the node is already going down); undefined when it can. */
  busy?: () => string | undefined;
  /** @default a new ResetChallenger (5 min) */
  challenger?: ResetChallenger;
}

/** Answers Reset calls; one per boot. */
export class ResetCoordinator {
  readonly #challenger: ResetChallenger;
  #running?: { plan: ResetPlan; step: string };

  constructor(readonly deps: ResetCoordinatorDeps) {
    this.#challenger = deps.challenger ?? new ResetChallenger();
  }

  /** The reset under way, if any. */
  get running(): ResetPlan | undefined {
    return this.#running?.plan;
  }

  /** Records the step the reset reached (shown to later callers and as an event). */
  step(name: string): void {
    if (!this.#running) return;
    this.#running.step = name;
    this.deps.events.emit("power", "reset", "step", `reset: ${name}`, { step: name });
  }

  /**
   * One Reset call.
   * @throws ResetRefusedError `failed-precondition` when the challenge does
   *   not hold, `unavailable` when the node has no record to name targets by.
   */
  async request(req: ResetRequestData, by: ActionRequester): Promise<ResetAnswer> {
    const bootId = await this.deps.bootId.bootId();
    if (this.#running) return this.#progress(bootId);
    const busy = this.deps.busy?.();
    if (busy) throw new ResetRefusedError("failed-precondition", `Cannot reset: ${busy}`);
    const { record, targets } = await this.#targets();
    const claims = { node: this.deps.node(), bootId, partitions: targets.map((t) => t.guid) };
    const partitions = targets.map(({ label, disk, guid, sizeBytes, number }) => ({
      label,
      disk,
      guid,
      sizeBytes,
      number,
    }));
    if (req.challenge === "") {
      const { token, expires } = await this.#challenger.issue(claims);
      this.deps.logger.info("reset", "reset previewed", { ...by, partitions: claims.partitions });
      return { partitions, challenge: token, expires, bootId, accepted: false, progress: "" };
    }
    try {
      await this.#challenger.verify(req.challenge, claims);
    } catch (e) {
      if (!(e instanceof ChallengeError)) throw e;
      this.deps.logger.warn("reset", "reset refused", { ...by, reason: e.reason });
      throw new ResetRefusedError("failed-precondition", e.message);
    }
    if (this.#running) return this.#progress(bootId); // a concurrent confirmation won
    const plan: ResetPlan = { mode: req.mode, powerOff: req.powerOff, record, targets, by };
    this.#running = { plan, step: "accepted" };
    this.deps.events.emit("power", "reset", "accepted", `reset (${req.mode}) accepted`, {
      mode: req.mode,
      partitions: targets.map((t) => `${t.label}:${t.guid}`).join(","),
      by: by.name,
    });
    this.deps.logger.info("reset", "reset accepted", { ...by, mode: req.mode });
    // After the reply has left, like Reboot.
    setTimeout(() => this.deps.start(plan), 100);
    return {
      partitions,
      challenge: "",
      expires: 0,
      bootId,
      accepted: true,
      progress: "accepted",
      mode: req.mode,
    };
  }

  #progress(bootId: string): ResetAnswer {
    const { plan, step } = this.#running!;
    return {
      partitions: plan.targets.map(({ label, disk, guid, sizeBytes, number }) => ({
        label,
        disk,
        guid,
        sizeBytes,
        number,
      })),
      challenge: "",
      expires: 0,
      bootId,
      accepted: true,
      progress: step,
      mode: plan.mode,
    };
  }

  async #targets(): Promise<{ record: RecordOnDisk; targets: ResetTarget[] }> {
    const record = this.deps.store.list("ProvisioningRecord")[0]?.spec;
    if (!record) {
      throw new ResetRefusedError(
        "unavailable",
        "This node has no provisioning record loaded yet (STATE not mounted, or never " +
          "provisioned), so it cannot name what it owns; nothing was changed, retry later",
      );
    }
    const [read, geometry] = await Promise.all([
      this.deps.block.readGpt(record.disk),
      this.deps.block.geometry(record.disk),
    ]);
    const targets = resetTargets(record, read?.table, geometry.logicalSectorSize);
    if (targets.length === 0) {
      throw new ResetRefusedError(
        "failed-precondition",
        `Nothing on "${record.disk}" is still as the provisioner recorded it: a reset would ` +
          "wipe nothing, so it is refused",
      );
    }
    return { record, targets };
  }
}
