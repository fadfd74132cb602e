import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { Machined } from "../core/mod.ts";
import { FakeMountBackend } from "../platform/mount/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import { type PowerAction, shutdownNode } from "./shutdown.ts";

/** A shutdown whose kexec `prepare` answers `staged`; what ran, in order. */
function run(action: PowerAction, o: { wanted?: boolean; staged: boolean; kexecWorks: boolean }) {
  const machined = new Machined({
    mode: "node",
    pid1: true,
    logger: createLogger({ console: false }),
  });
  machined.start();
  const power = new FakePowerBackend();
  power.kexecStaged = o.kexecWorks; // the fake's reboot(KEXEC) fails with EINVAL otherwise
  const order: string[] = [];
  void shutdownNode(action, {
    machined,
    power,
    mount: new FakeMountBackend(),
    stopServices: () => (order.push("services"), Promise.resolve()),
    keepMounted: [],
    kexec: {
      wanted: o.wanted ?? true,
      prepare: () => (order.push("prepare"), Promise.resolve(o.staged)),
    },
  });
  const power_ = (e: { kind: string; subject: string; action: string }) =>
    e.kind === "power" && e.subject === "kexec";
  const kexecEvents = () => machined.events.history().filter(power_).map((e) => e.action);
  return { machined, power, order, kexecEvents };
}

Deno.test("kexec shutdown: staged before services stop, ends in reboot(KEXEC)", async () => {
  const r = run("reboot", { staged: true, kexecWorks: true });
  assert.equal(await r.power.ended(), "kexec");
  assert.deepEqual(r.order, ["prepare", "services"]);
  const phases = r.machined.events.history().filter((e) =>
    e.kind === "phase" && e.action === "done"
  )
    .map((e) => e.subject);
  assert.equal(phases[phases.indexOf("kexecLoad") + 1], "stopServices");
  assert.deepEqual(r.kexecEvents(), []);
});

Deno.test("kexec shutdown: reboot(KEXEC) failing falls back to a cold reboot, as an event", async () => {
  const r = run("reboot", { staged: true, kexecWorks: false });
  assert.equal(await r.power.ended(), "restarting");
  assert.deepEqual(r.kexecEvents(), ["fallback"]);
  const ev = r.machined.events.history().find((e) => e.action === "fallback")!;
  assert.match(ev.message, /kexec failed \(.*EINVAL.*\): rebooting cold/);
});

Deno.test("kexec shutdown: nothing staged → cold; injected kexec fault → cold", async () => {
  const r = run("reboot", { staged: false, kexecWorks: true });
  assert.equal(await r.power.ended(), "restarting");
  assert.ok(!r.power.faults.calls.some((c) => c.op === "kexec"), "reboot(KEXEC) not tried");
  const f = run("reboot", { staged: true, kexecWorks: true });
  f.power.faults.failNext("kexec", "EBUSY");
  assert.equal(await f.power.ended(), "restarting");
  assert.deepEqual(f.kexecEvents(), ["fallback"]);
});

Deno.test("kexec shutdown: a power-off, or a reboot that did not ask for kexec, never prepares", async () => {
  const off = run("poweroff", { staged: true, kexecWorks: true });
  assert.equal(await off.power.ended(), "powered-off");
  const cold = run("reboot", { wanted: false, staged: true, kexecWorks: true });
  assert.equal(await cold.power.ended(), "restarting");
  assert.deepEqual([off.order, cold.order], [["services"], ["services"]]);
});
