/**
 * Reset on a node: the coordinator answering the API, and the sequence that
 * carries an accepted reset out (handed to the shutdown sequence). Forced
 * stopping kills every service process at once through cgroup v2's
 * `cgroup.kill` on machined's service subtree (the supervisor's own stop is
 * still requested, so nothing is restarted); the wipe is
 * {@link wipeResetTargets}, tried twice, and the node reboots or powers off
 * whatever it returned: a reset always finishes. Whether it wiped is then
 * seen from outside: the node comes back with new partition GUIDs
 * (`machinectl reset` checks).
 * @module
 */
import { join } from "node:path";
import { wipeResetTargets } from "../controllers/block/mod.ts";
import type { BlockBackend } from "../platform/block/mod.ts";
import type { CryptBackend } from "../platform/crypt/mod.ts";
import type { BootIdSource } from "../platform/identity/mod.ts";
import type { ResetSequence } from "./reset_sequence.ts";
import type { Machined } from "../core/mod.ts";
import { ResetCoordinator, type ResetPlan } from "./reset_coordinator.ts";

/** How long a graceful reset waits for services before killing them. */
export const RESET_GRACEFUL_DEADLINE_MS = 60_000;

/**
 * Kills every process under `cgroupDir` (cgroup.kill, Linux ≥ 5.14), unless
 * machined itself lives there (PID 1 must never be in what it kills).
 * @throws Error when machined's own cgroup is inside `cgroupDir`.
 */
export async function killCgroupTree(
  cgroupDir: string,
  own: () => Promise<string> = () => Deno.readTextFile("/proc/self/cgroup"),
  cgroupRoot = "/sys/fs/cgroup",
): Promise<void> {
  const line = (await own()).split("\n").find((l) => l.startsWith("0::"));
  const mine = join(cgroupRoot, line?.slice(3).trim() ?? "/");
  if (mine === cgroupDir || mine.startsWith(cgroupDir + "/")) {
    throw new Error(`Refusing to kill cgroup "${cgroupDir}": machined itself runs in "${mine}"`);
  }
  await Deno.writeTextFile(join(cgroupDir, "cgroup.kill"), "1");
}

/** What {@link nodeReset} needs. */
export interface NodeResetDeps {
  machined: Machined;
  block: BlockBackend;
  /** Crypto-erases STATE/EPHEMERAL holding a LUKS2 header before the wipe; none: not looked for. */
  crypt?: CryptBackend;
  bootId: BootIdSource;
  node: () => string;
  /** Starts the shutdown sequence (which then asks {@link NodeReset.sequence}). */
  requestPower: (action: "reboot" | "poweroff") => void;
  /** Whether a shutdown is already under way (a reset is then refused). */
  shuttingDown: () => boolean;
  /** machined's service cgroup subtree; undefined means no forced kill. */
  serviceCgroups?: string;
  gracefulDeadlineMs?: number;
}

/** The reset of a node: the API's side and the shutdown's side. */
export interface NodeReset {
  readonly coordinator: ResetCoordinator;
  /** The sequence of the accepted reset, if any, for the shutdown. */
  sequence(): ResetSequence | undefined;
}

/** Builds the node's reset. */
export function nodeReset(deps: NodeResetDeps): NodeReset {
  const { machined } = deps;
  let plan: ResetPlan | undefined;
  const coordinator = new ResetCoordinator({
    store: machined.store,
    block: deps.block,
    bootId: deps.bootId,
    node: deps.node,
    events: machined.events,
    logger: machined.logger,
    busy: () => deps.shuttingDown() && !plan ? "the node is already shutting down" : undefined,
    start: (p) => {
      plan = p;
      deps.requestPower(p.powerOff ? "poweroff" : "reboot");
    },
  });
  return {
    coordinator,
    sequence() {
      if (!plan) return undefined;
      const p = plan;
      return {
        mode: p.mode,
        gracefulDeadlineMs: deps.gracefulDeadlineMs ?? RESET_GRACEFUL_DEADLINE_MS,
        forceKill: () =>
          deps.serviceCgroups ? killCgroupTree(deps.serviceCgroups) : Promise.resolve(),
        onStep: (step) => coordinator.step(step),
        wipe: async () => {
          const guids = p.targets.map((t) => t.guid);
          let result;
          try {
            result = await wipeResetTargets(deps.block, p.record, guids, { crypt: deps.crypt });
          } catch (e) {
            machined.logger.warn("reset", "wipe failed; trying once more", { error: e });
            result = await wipeResetTargets(deps.block, p.record, guids, { crypt: deps.crypt });
          }
          machined.events.emit("power", "reset", "wiped", "reset: partitions wiped", {
            partitions: result.wiped.map((t) => `${t.label}:${t.guid}`).join(","),
            reread: result.reread,
            ...(result.leftOpen ? { leftOpen: result.leftOpen.join(",") } : {}),
          });
          machined.logger.info("reset", "wiped", {
            partitions: result.wiped.map((t) => t.label).join(","),
          });
        },
      };
    },
  };
}
