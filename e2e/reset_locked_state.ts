/**
 * Step 0 of e2e/node_reset_test.ts: a node whose config lives only on its
 * encrypted STATE is powered off and checked from the host (no canary or
 * passphrase in clear, the `machined-nodeid` and `machined-static` tokens in
 * the header), then booted as another board: the nodeid key fails, the node
 * waits in maintenance with the condition `locked` and STATE's bytes
 * unchanged, a wrong passphrase refused with STATE still unchanged, and
 * `machinectl unlock STATE --insecure` (passphrase on stdin) opens it
 * (e2e/luks_host.ts's checkAtRest, e2e/locked_state_unlock.ts). The
 * boot then goes on with the config read from STATE, without a reboot: the
 * case carries on from there (e2e/node_reset_test.ts).
 * @module
 */
import assert from "node:assert/strict";
import { isRunning, type Vm } from "../imager/mod.ts";
import { machinectl, type ResourceDoc } from "./helpers.ts";
import { checkAtRest } from "./luks_host.ts";
import { unlockLockedState } from "./locked_state_unlock.ts";
import { PASSPHRASE, poll, secondsSince } from "./reset_node.ts";

type Docs = (...args: string[]) => Promise<ResourceDoc[]>;

/**
 * Step 0: power off the node (board A), check its disk from the host, boot it
 * as board B (the nodeid key fails: maintenance, `locked`, STATE unchanged)
 * and unlock STATE with the passphrase through `machinectl unlock --insecure`.
 */
export async function lockedStateStep(vm: Vm, o: {
  work: string;
  cc: string;
  image: string;
  port: number;
  canary: string;
  docs: Docs;
  figures: Record<string, number | string>;
  boot: () => Promise<Vm>;
  setVm: (vm: Vm) => void;
  /** Runs on board A before its power-off (the marker service writes its marker on /var). */
  beforeOff: () => Promise<unknown>;
}): Promise<{ uuid: string; unlockedAt: number }> {
  const [st] = await poll("STATE ready and encrypted", async () => {
    const d = (await o.docs("volumestatus", "STATE")).filter((v) => v.spec.phase === "ready");
    return d.length === 1 ? d : undefined;
  });
  assert.equal(st.spec.encrypted, true);
  assert.deepEqual(st.spec.unlockedBy, { slot: 0, kind: "nodeid" });
  // The config (with the canary) was persisted on STATE once it mounted.
  await poll("the config on STATE", async () => {
    const [cs] = await o.docs("configstatus");
    return cs?.spec.state === "valid" ? true : undefined;
  });
  await o.beforeOff();
  const tOff = performance.now();
  const off = await machinectl(o.cc, o.port, "shutdown", "--wait", "--timeout", "4m");
  assert.equal(off.code, 0, off.out + off.err);
  await poll(
    "QEMU to exit",
    async () => (await isRunning(vm.state.pid)) ? undefined : true,
    120_000,
  );
  o.figures.powerOffS = secondsSince(tOff);
  const tChecks = performance.now();
  const state = await checkAtRest({
    image: o.image,
    scratch: o.work,
    volume: "STATE",
    secrets: { "the canary": o.canary, "the passphrase": PASSPHRASE },
    tokens: ["machined-nodeid", "machined-static"],
  });
  o.figures.hostChecksS = secondsSince(tChecks);

  const t0 = performance.now();
  const b = await o.boot();
  o.setVm(b);
  const unlockedAt = await unlockLockedState({
    vm: b,
    port: o.port,
    image: o.image,
    state,
    passphrase: PASSPHRASE,
    slot: 1,
    reason: /^STATE is locked: tried slot 0 \(nodeid\): did not open; slot 1 \(static\)/,
    figures: o.figures,
    bootedAt: t0,
  });
  return { uuid: state.uuid, unlockedAt };
}
