/**
 * What "came back healthy" means for `reboot --rolling`: the node stops
 * answering (it went down), then answers again with MachineStatus in stage
 * `running`. A node that never goes down, or does not come back in time, stops
 * the roll. `upgrade --rolling` waits for the reboot itself (the upgrade
 * command returns once the node is back on the new slot), so after it the
 * roll only checks the node answers `running` ({@link waitRunning}).
 *
 * @module
 */
import type { ConnectionFlags } from "./connection.ts";
import { connectToNode } from "./connection.ts";
import { fromProtoResource } from "../api/mapping/mod.ts";

/** Timeouts of {@link waitRebooted}. */
export interface RollingTimeouts {
  /** @default 120 s */
  readonly downMs?: number;
  /** @default 600 s */
  readonly upMs?: number;
  /** @default 1 s */
  readonly pollMs?: number;
}

/** The node's MachineStatus stage, or undefined when it does not answer. */
async function stageOf(flags: ConnectionFlags, node: string): Promise<string | undefined> {
  try {
    using conn = await connectToNode({ ...flags, endpoints: [node] });
    const r = await conn.client.get(
      { type: "MachineStatus", id: "machine" },
      { timeoutMs: 5_000 },
    );
    if (!r.resource) return "unknown";
    const res = fromProtoResource(r.resource);
    const spec = res.spec as { stage?: unknown };
    return typeof spec.stage === "string" ? spec.stage : "unknown";
  } catch {
    return undefined;
  }
}

/**
 * Waits until `node` has gone down and come back running.
 * @throws Error naming which of the two did not happen in time
 */
export async function waitRebooted(
  flags: ConnectionFlags,
  node: string,
  t: RollingTimeouts = {},
): Promise<void> {
  const poll = t.pollMs ?? 1000;
  const sleep = () => new Promise((r) => setTimeout(r, poll));
  const start = performance.now();
  while ((await stageOf(flags, node)) !== undefined) {
    if (performance.now() - start > (t.downMs ?? 120_000)) {
      throw new Error(`it still answers ${Math.round((t.downMs ?? 120_000) / 1000)} s later`);
    }
    await sleep();
  }
  const down = performance.now();
  let last: string | undefined;
  while ((last = await stageOf(flags, node)) !== "running") {
    if (performance.now() - down > (t.upMs ?? 600_000)) {
      throw new Error(
        `not running ${Math.round((t.upMs ?? 600_000) / 1000)} s after it went ` +
          `down (${last === undefined ? "not answering" : `stage ${last}`})`,
      );
    }
    await sleep();
  }
}

/**
 * Waits until `node` answers with MachineStatus `running` (it may still be
 * settling after an upgrade's reboot), at most `t.upMs`.
 * @throws Error with the last stage seen when it is not running in time
 */
export async function waitRunning(
  flags: ConnectionFlags,
  node: string,
  t: RollingTimeouts = {},
): Promise<void> {
  const upMs = t.upMs ?? 120_000;
  const start = performance.now();
  let last: string | undefined;
  while ((last = await stageOf(flags, node)) !== "running") {
    if (performance.now() - start > upMs) {
      throw new Error(
        `not running ${Math.round(upMs / 1000)} s after the upgrade returned ` +
          `(${last === undefined ? "not answering" : `stage ${last}`})`,
      );
    }
    await new Promise((r) => setTimeout(r, t.pollMs ?? 1000));
  }
}
