/**
 * VolumeProvisionController: makes the install disk hold STATE and EPHEMERAL
 * as the VolumeSpecs ask, through {@link decideProvisioning} on facts read
 * afresh every cycle, so that a disk is only ever written when the pure
 * decision says so; then formats what it created (plain, or LUKS2 through
 * volume_encryption.ts when the volume has `encryption`: the filesystem then
 * lives on /dev/mapper/<volume>) and publishes each volume's progress.
 * Inputs: VolumeSpec, DiskStatus (weak; a hotplugged disk retriggers),
 * MachineConfig (the keys). Output: VolumeStatus.
 * @module
 */
import { configSha256, type MachineConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import { isSysError } from "../../native-ops/mod.ts";
import type { BlockBackend } from "../../platform/block/mod.ts";
import type { CryptBackend } from "../../platform/crypt/mod.ts";
import type { MountBackend } from "../../platform/mount/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import {
  type CreatedPartition,
  DISK_STATUS,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  VOLUME_SPEC,
  VOLUME_STATUS,
  type VolumeAction,
  type VolumeName,
  type VolumePhase,
  type VolumeRotation,
  type VolumeSpecSpec,
  type VolumeStatusSpec,
} from "../../resources/mod.ts";
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { decideProvisioning, type ProvisioningDecision } from "./decide_provisioning.ts";
import { resolveDevice, waitForDeviceNode } from "./device_path.ts";
import { BLOCK_NAMESPACE } from "./disk_discovery.ts";
import { type DiskFacts, gatherDiskFacts, type PartitionFacts } from "./disk_facts.ts";
import { writePlan } from "./execute_plan.ts";
import { DEFAULT_LAYOUT, partitionRole, type VolumeLayout } from "../../layout/mod.ts";
import type { KeySource } from "./luks_volume.ts";
import { makeFilesystem } from "./mkfs.ts";
import { ProvisionError, toVolumeError } from "./provision_error.ts";
import { EncryptionStep } from "./encryption_step.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";
import type { EncryptionOutcome } from "./volume_encryption.ts";
import type { KeyReport } from "./encryption_step.ts";
import { emptyStatus, encryptionFields, sameExtent } from "./volume_status_fields.ts";

/** Dependencies of {@link VolumeProvisionController}. */
export interface VolumeProvisionDeps {
  backend: BlockBackend;
  process: ProcessBackend;
  /** To know which partitions are in use. */
  mounts: MountBackend;
  /** Alignment, minimum EPHEMERAL and zeroing sizes (STATE's size comes from its spec). */
  layout?: Partial<Omit<VolumeLayout, "stateSize">>;
  /** Resolves once a partition's node exists. @default a bounded wait on devtmpfs */
  waitForDevice?: (path: string, signal: AbortSignal) => Promise<void>;
  /** Resolves /dev/disk/by-* links. @default Deno.realPath, else the path */
  resolveDevice?: (path: string) => Promise<string>;
  events?: EventBus;
  /** Unique partition GUIDs for new partitions. @default crypto.randomUUID */
  newGuid?: () => string;
  /** LUKS2 for volumes with `encryption`; without it such a volume is refused (`no-crypt-backend`). */
  crypt?: CryptBackend;
  /** Where `nodeid` keys come from. @default the board's SMBIOS UUID */
  keys?: KeySource;
  /** Passphrases supplied through UnlockVolume; it wakes this controller. */
  unlocker?: VolumeUnlocker;
  /**
   * The config in force with its secrets (the keeper's): the store's MachineConfig has
   * every `static` passphrase redacted. Used when its hash is the store's. @default the store's
   */
  fullConfig?: () => MachineConfig | undefined;
}

type Volumes = Record<VolumeName, VolumeSpecSpec>;
/** What the encryption step reported for a volume. */
type Encrypted = { outcome: EncryptionOutcome; keys: KeyReport };
/** What carrying out the table decision left: facts, consented partitions, whether it wrote. */
type Carried = { facts: DiskFacts | undefined; format: PartitionFacts[]; acted: boolean };

/** Provisions and formats the install disk's STATE and EPHEMERAL. */
export class VolumeProvisionController implements MachineController {
  readonly name = "block.VolumeProvisionController";
  readonly inputs = [
    { type: VOLUME_SPEC, kind: "weak" },
    { type: DISK_STATUS, kind: "weak" },
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: VOLUME_STATUS, kind: "exclusive" }] as const;
  readonly #deps: VolumeProvisionDeps;
  /** Partitions this process created, by unique GUID. */
  readonly #created = new Map<string, CreatedPartition>();
  #lastEvent = "";
  readonly #encryption: EncryptionStep;
  /** The last decision that wrote the table or made a filesystem (VolumeStatus.acted). */
  #acted: VolumeAction | null = null;

  constructor(deps: VolumeProvisionDeps) {
    this.#deps = deps;
    this.#encryption = new EncryptionStep({
      crypt: deps.crypt,
      keys: deps.keys,
      block: deps.backend,
      process: deps.process,
      zeroBytes: deps.layout?.zeroBytes ?? DEFAULT_LAYOUT.zeroBytes,
      events: deps.events,
      unlocker: deps.unlocker,
    });
  }

  /** A passphrase accepted by UnlockVolume wakes a reconcile that opens the volume. */
  watch(wake: () => void, signal: AbortSignal): Promise<void> {
    this.#deps.unlocker?.setWake(wake);
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve()));
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const specs = ctx.list(VOLUME_SPEC).map((r) => r.spec);
    const state = specs.find((s) => s.volume === "STATE");
    const ephemeral = specs.find((s) => s.volume === "EPHEMERAL");
    if (!state || !ephemeral) {
      for (const s of specs) {
        await this.#report(ctx, s.volume, { message: "waiting for both specs" });
      }
      return;
    }
    const volumes: Volumes = { STATE: state, EPHEMERAL: ephemeral };
    const disk = await (this.#deps.resolveDevice ?? resolveDevice)(state.disk);
    const all = async (phase: VolumePhase, fields: Partial<VolumeStatusSpec>) => {
      for (const v of ["STATE", "EPHEMERAL"] as const) {
        await this.#report(ctx, v, { phase, disk, ...fields });
      }
    };
    const encrypted = specs.filter((s) => s.encryption).map((s) => s.volume);
    if (encrypted.length > 0 && !this.#deps.crypt) {
      // Never make a plain filesystem where encryption was asked for (docs/encryption.md).
      const message = `machine.install.encryption is set for ${encrypted.join(" and ")}, but ` +
        `this node has no LUKS2 backend; nothing was written to "${disk}"`;
      this.#announce(disk, "refuse", message);
      const error = { message, code: "no-crypt-backend", op: "decide" };
      await all("failed", { decision: "refuse", message, error });
      return;
    }
    try {
      const facts = await this.#facts(disk);
      const decision = decideProvisioning(
        facts,
        { ...DEFAULT_LAYOUT, ...this.#deps.layout, stateSize: state.size },
        { disk: state.disk, wipe: state.wipe, system: state.system },
        { newGuid: this.#deps.newGuid },
      );
      this.#announce(disk, decision.action, decision.reason);
      const base = { decision: decision.action, message: decision.reason };
      if (decision.action === "refuse") {
        const error = { message: decision.reason, code: decision.code, op: "decide" };
        const waiting = decision.code === "missing" || decision.code === "awaiting-install";
        await all(waiting ? "waiting" : "failed", { ...base, error });
        return;
      }
      const done = await this.#carryOut(ctx, disk, facts!, decision, (p) => all(p, base));
      const outcomes = await this.#prepare(ctx, done, volumes, (p) => all(p, base));
      if (done.acted || outcomes.formatted) {
        const at = new Date(ctx.clock.now()).toISOString();
        this.#acted = { decision: decision.action, message: decision.reason, at };
      }
      const facts2 = outcomes.formatted ? await this.#facts(disk) : done.facts;
      const acted = this.#acted;
      await this.#publish(ctx, disk, facts2, volumes, outcomes.by, { ...base, acted });
    } catch (e) {
      const error = toVolumeError(e);
      await all("failed", { error });
      this.#announce(disk, "failed", error.message);
      throw e;
    }
  }

  /**
   * Write the plan (or, for `leave`, only make sure the kernel knows our
   * partitions). Returns the disk's facts afterwards, the partitions
   * provisioning consents to format (created now, or ours and blank) and
   * whether the table was written.
   */
  async #carryOut(
    ctx: ReconcileContext<ResourceSpecs>,
    disk: string,
    facts: DiskFacts,
    decision: Exclude<ProvisioningDecision, { action: "refuse" }>,
    phase: (p: VolumePhase) => Promise<void>,
  ): Promise<Carried> {
    let format: PartitionFacts[];
    if (decision.action === "leave") {
      format = decision.format;
      await this.#ensureNodes(ctx, disk, facts, [decision.state, decision.ephemeral]);
    } else {
      await phase("provisioning");
      const method = await writePlan(this.#deps.backend, disk, decision);
      ctx.log("wrote partition table", { disk, action: decision.action, method });
      for (const p of [decision.created.state, decision.created.ephemeral]) {
        const { number, uuid, type, name, firstLba, lastLba } = p;
        this.#created.set(uuid, { number, uuid, type, name, firstLba, lastLba });
      }
      const after = await this.#facts(disk);
      if (!after) throw new ProvisionError("read", disk, { cause: "it vanished" });
      format = (after.gpt?.partitions ?? []).filter((p) => this.#created.has(p.uuid));
      await this.#ensureNodes(ctx, disk, after, format);
    }
    if (decision.action === "leave") return { facts, format, acted: false };
    return { facts: await this.#facts(disk), format, acted: true };
  }

  /**
   * Format each volume provisioning consented to (plain), or run the
   * encryption step (volumes with `encryption`, or found holding LUKS2).
   */
  async #prepare(
    ctx: ReconcileContext<ResourceSpecs>,
    done: Carried,
    volumes: Volumes,
    phase: (p: VolumePhase) => Promise<void>,
  ): Promise<{ by: Partial<Record<VolumeName, Encrypted>>; formatted: boolean }> {
    const by: Partial<Record<VolumeName, Encrypted>> = {};
    let formatted = false;
    const install = this.#install(ctx);
    for (const v of ["STATE", "EPHEMERAL"] as const) {
      const spec = volumes[v];
      const role = v === "STATE" ? "state" : "ephemeral";
      const p = done.facts?.gpt?.partitions.find((x) => partitionRole(x) === role);
      if (!p) continue;
      const mayFormat = done.format.some((f) => f.uuid === p.uuid);
      const encryption = install?.encryption?.[role];
      if (encryption || p.fs?.type === "crypto_LUKS") {
        if (mayFormat) await phase("formatting");
        const rotation = (r: VolumeRotation) => this.#report(ctx, v, { rotation: r });
        const o = await this.#encryption.run(spec, p, encryption, mayFormat, rotation);
        by[v] = o;
        formatted ||= o.outcome.kind === "open" && o.outcome.formatted;
        continue;
      }
      if (!mayFormat) continue;
      await phase("formatting");
      await makeFilesystem(this.#deps.process, spec.filesystem, p.path, spec.partitionName)
        .catch((e) => {
          throw new ProvisionError("format", p.path, { cause: e });
        });
      formatted = true;
    }
    return { by, formatted };
  }

  /**
   * `machine.install` with the passphrases: the full config when it is the one in the
   * store (same hash), else the store's (redacted: a `static` key then refuses to be used).
   */
  #install(ctx: ReconcileContext<ResourceSpecs>): MachineConfig["machine"]["install"] {
    const stored = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec;
    const full = this.#deps.fullConfig?.();
    if (full && stored?.sha256 && configSha256(full) === stored.sha256) return full.machine.install;
    return stored?.config.machine.install;
  }

  async #facts(disk: string): Promise<DiskFacts | undefined> {
    const mountedSources = new Set((await this.#deps.mounts.mounts()).map((m) => m.source));
    try {
      return await gatherDiskFacts(this.#deps.backend, disk, {
        mountedSources,
        zeroBytes: this.#deps.layout?.zeroBytes ?? DEFAULT_LAYOUT.zeroBytes,
      });
    } catch (e) {
      if (isSysError(e, "ENOENT")) return undefined;
      throw new ProvisionError("read", disk, { cause: e });
    }
  }

  /** Make the kernel know `parts` (a kernel without a GPT parser, a fresh boot) and wait for their nodes. */
  async #ensureNodes(
    ctx: ReconcileContext<ResourceSpecs>,
    disk: string,
    facts: DiskFacts,
    parts: readonly PartitionFacts[],
  ): Promise<void> {
    const b = this.#deps.backend;
    const known = await b.kernelPartitions(disk).catch(() => []);
    const s = facts.sectorSize;
    const missing = parts.some((p) =>
      !known.some((k) => k.number === p.number && k.start === p.firstLba * s)
    );
    if (missing) {
      await b.rereadPartitions(disk).catch((e) => {
        if (!isSysError(e, "ENOTTY")) {
          throw new ProvisionError("re-read the partitions of", disk, { cause: e });
        }
      });
    }
    const wait = this.#deps.waitForDevice ??
      ((path: string, signal: AbortSignal) =>
        waitForDeviceNode(path, { clock: ctx.clock, signal }));
    for (const p of parts) {
      await wait(p.path, ctx.signal).catch((e) => {
        throw new ProvisionError("find the partition node", p.path, { cause: e });
      });
    }
  }

  async #publish(
    ctx: ReconcileContext<ResourceSpecs>,
    disk: string,
    facts: DiskFacts | undefined,
    volumes: Volumes,
    outcomes: Partial<Record<VolumeName, Encrypted>>,
    base: { decision: string; message: string; acted: VolumeAction | null },
  ): Promise<void> {
    for (const v of ["STATE", "EPHEMERAL"] as const) {
      const role = v === "STATE" ? "state" : "ephemeral";
      const p = facts?.gpt?.partitions.find((x) => partitionRole(x) === role);
      const created = p ? this.#created.get(p.uuid) : undefined;
      const ok = p?.fs !== undefined;
      await this.#report(ctx, v, {
        ...base,
        phase: ok ? "ready" : "failed",
        disk,
        partitionPath: p?.path ?? "",
        partitionUuid: p?.uuid ?? "",
        filesystem: p?.fs?.type ?? "",
        filesystemUuid: p?.fs?.uuid ?? "",
        diskGuid: facts?.gpt?.diskGuid ?? "",
        created: created && p && sameExtent(created, p) ? created : null,
        error: ok ? null : {
          message: `${volumes[v].partitionName} has no filesystem after provisioning`,
          code: "",
          op: "probe",
        },
        ...(outcomes[v] ? encryptionFields(outcomes[v].outcome, outcomes[v].keys) : {}),
      });
    }
  }

  async #report(
    ctx: ReconcileContext<ResourceSpecs>,
    volume: VolumeName,
    fields: Partial<VolumeStatusSpec>,
  ): Promise<void> {
    await ctx.apply(
      { type: VOLUME_STATUS, namespace: BLOCK_NAMESPACE, id: volume },
      (cur) => ({ ...(cur ?? emptyStatus(volume)), error: null, ...fields, volume }),
    );
  }

  /** Emit an event when the outcome changes (not on every resync or retry). */
  #announce(disk: string, action: string, message: string): void {
    const key = `${disk}:${action}:${message}`;
    if (key === this.#lastEvent) return;
    this.#lastEvent = key;
    this.#deps.events?.emit("task", `provision ${disk}`, action, message);
  }
}
