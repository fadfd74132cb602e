import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakePowerBackend } from "./backend_fake.ts";
import { powerBackendConformance } from "./backend_conformance.ts";

powerBackendConformance("FakePowerBackend", () => new FakePowerBackend());

Deno.test("fake power: restart syncs, ends the machine and never resolves", async () => {
  const p = new FakePowerBackend();
  const ended = p.ended();
  let settled = false;
  p.restart().finally(() => settled = true);
  assert.equal(await ended, "restarting");
  assert.equal(p.syncs, 1);
  await Promise.resolve();
  assert.equal(settled, false);
});

Deno.test("fake power: Ctrl-Alt-Del mode and staged kexec", async () => {
  const p = new FakePowerBackend();
  await p.setCtrlAltDel("signal");
  assert.equal(p.ctrlAltDel, "signal");
  p.kexecStaged = true;
  void p.kexec();
  assert.equal(await p.ended(), "kexec");
});

Deno.test("fake power: kexec with nothing staged is a typed EINVAL", async () => {
  const p = new FakePowerBackend();
  await assert.rejects(p.kexec(), (e) => isSysError(e, "EINVAL") && e.op === "reboot");
  assert.equal(p.state, "running");
});
