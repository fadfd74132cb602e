/**
 * What the network conformance cases share: the environment each case gets,
 * the harness hooks, and assertions on SysErrors and events.
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import type { NetworkBackend, NetworkEvent, NetworkSubscription } from "./backend.ts";

/** What each case receives. */
export interface NetworkEnv {
  backend: NetworkBackend;
  /** Names of the two ends of a fresh veth pair. */
  a: string;
  b: string;
}

/** Harness hooks: make a fresh environment, tear it down. */
export interface NetworkHarness {
  setup(): Promise<NetworkEnv>;
  teardown(env: NetworkEnv): Promise<void>;
  /** Link kinds the kernel under test can create (`vlan`, `bond`, `bridge`). */
  kinds: ReadonlySet<string>;
}

/** Assert that `p` rejects with a SysError of `code` (and `op`, if given). */
export async function rejectsSys(p: Promise<unknown>, code: string, op?: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isSysError(e), `expected SysError ${code}, got ${e}`);
    assert.equal(e.code, code);
    if (op) assert.equal(e.op, op);
    return true;
  });
}

/** Wait (bounded) for the first event satisfying `pred`. */
export async function waitForEvent(
  sub: NetworkSubscription,
  pred: (e: NetworkEvent) => boolean,
  timeoutMs = 5000,
): Promise<NetworkEvent> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const e = await sub.nextEvent(deadline - performance.now());
    if (e && pred(e)) return e;
  }
  throw new Error(`no matching event within ${timeoutMs} ms`);
}
