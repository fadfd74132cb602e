/**
 * Step 0 of e2e/node_reset_test.ts: a node whose config lives only on its
 * encrypted STATE is powered off and checked from the host (no canary or
 * passphrase in clear, the `machined-nodeid` and `machined-static` tokens in
 * the header), then booted as another board: the nodeid key fails, the node
 * waits in maintenance with the condition `locked` and STATE's bytes
 * unchanged, a wrong passphrase refused with STATE still unchanged, and
 * `machinectl unlock STATE --insecure` (passphrase on stdin) opens it. The
 * boot then goes on with the config read from STATE, without a reboot: the
 * case carries on from there (e2e/node_reset_test.ts).
 * @module
 */
import assert from "node:assert/strict";
import { isRunning, type Vm } from "../imager/mod.ts";
import { sha256Range } from "./cidata.ts";
import { machinectl, parseDocs, type ResourceDoc } from "./helpers.ts";
import { fileContains, luksDumpAt, partitionRange, unlockInsecure } from "./luks_host.ts";
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
  const enc = new TextEncoder();
  assert.equal(await fileContains(o.image, enc.encode(o.canary)), false, "the canary in clear");
  assert.equal(await fileContains(o.image, enc.encode(PASSPHRASE)), false, "the passphrase");
  const state = await partitionRange(o.image, "STATE");
  const header = await luksDumpAt(o.image, state.offset, o.work);
  assert.ok(header.tokens.includes("machined-nodeid"), header.tokens.join());
  assert.ok(header.tokens.includes("machined-static"), header.tokens.join());
  const stateSha = await sha256Range(o.image, state.offset, state.length);
  o.figures.hostChecksS = secondsSince(tChecks);

  const t0 = performance.now();
  const b = await o.boot();
  o.setVm(b);
  const fp = (await b.waitForConsole(/API certificate fingerprint (SHA256:[0-9a-f]{64})/, {
    timeoutMs: 300_000,
  }))[1];
  const insecure = async (...args: string[]) => {
    const r = await machinectl("/nonexistent", o.port, ...args, "--insecure", "--fingerprint", fp);
    if (r.code !== 0) throw new Error(r.err);
    return parseDocs(r.out);
  };
  const ms = await poll("maintenance saying locked", async () => {
    const [m] = await insecure("get", "machinestatus", "-o", "json");
    const c = (m?.spec.unmetConditions as { name: string; reason: string }[] | undefined)
      ?.find((x) => x.name === "locked");
    return c ? { stage: m.spec.stage, reason: c.reason } : undefined;
  });
  o.figures.lockedBootToMaintenanceS = secondsSince(t0);
  assert.equal(ms.stage, "maintenance");
  assert.match(
    ms.reason,
    /^STATE is locked: tried slot 0 \(nodeid\): did not open; slot 1 \(static\)/,
  );
  assert.equal(await sha256Range(o.image, state.offset, state.length), stateSha, "STATE unchanged");
  const wrong = await unlockInsecure(o.port, "STATE", "not the passphrase", fp);
  assert.notEqual(wrong.code, 0, wrong.out + wrong.err);
  assert.match(wrong.err, /opens no keyslot/);
  assert.equal(await sha256Range(o.image, state.offset, state.length), stateSha, "STATE unchanged");
  const unlockedAt = performance.now();
  const ok = await unlockInsecure(o.port, "STATE", PASSPHRASE, fp);
  assert.equal(ok.code, 0, ok.out + ok.err);
  assert.match(ok.out, /STATE unlocked by slot 1: \/dev\/mapper\/STATE/);
  o.figures.unlockS = secondsSince(unlockedAt);
  return { uuid: header.uuid, unlockedAt };
}
