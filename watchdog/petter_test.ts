import assert from "node:assert/strict";
import { FakeClock } from "../runtime/mod.ts";
import { FakeWatchdog } from "../platform/watchdog/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import { memoryLogger } from "./testing.ts";
import { WatchdogPetter } from "./petter.ts";
import { disarmingPower } from "./node_watchdog.ts";

/**
 * The kernel's timer (the device's clock) and machined's event loop (the
 * petter's clock) are separate: a stuck loop is the kernel's time moving
 * while the loop's does not.
 */
function rig(opts: { timeoutS?: number; progressing?: () => boolean } = {}) {
  const kernel = new FakeClock();
  const loop = new FakeClock();
  const device = new FakeWatchdog(kernel, { timeoutS: 180 });
  const logger = memoryLogger();
  const petter = new WatchdogPetter({
    device,
    timeoutS: opts.timeoutS ?? 60,
    logger,
    clock: loop,
    progressing: opts.progressing,
  });
  /** Moves time in 1 s steps; the loop's timers run only when `loopRuns`. */
  const pass = async (ms: number, loopRuns = true) => {
    for (let t = 0; t < ms; t += 1000) {
      await kernel.advance(1000);
      if (loopRuns) await loop.advance(1000);
    }
  };
  return { kernel, loop, device, logger, petter, pass };
}

Deno.test("the petter sets the running timeout and keeps a progressing node armed", async () => {
  const { device, petter, pass } = rig();
  petter.start();
  assert.equal(device.timeoutS, 60);
  assert.equal(petter.intervalMs, 15_000);
  await pass(10 * 60_000);
  assert.equal(device.state, "armed");
  assert.equal(petter.pets, 40);
});

Deno.test("a stuck event loop stops the pets and the watchdog fires one timeout after the last", async () => {
  const { kernel, device, petter, pass } = rig();
  petter.start();
  await pass(60_000);
  const lastPet = kernel.monotonic();
  await pass(59_000, false); // a busy loop: no timer runs
  assert.equal(device.state, "armed");
  await pass(2_000, false);
  assert.equal(device.state, "fired");
  assert.equal(device.firedAt, lastPet + 60_000);
});

Deno.test("a runtime that is not progressing is not petted for, and the watchdog fires", async () => {
  let progressing = true;
  const { device, petter, pass } = rig({ progressing: () => progressing });
  petter.start();
  await pass(30_000);
  progressing = false;
  await pass(61_000);
  assert.equal(device.state, "fired");
  assert.ok(petter.skipped >= 3, `skipped ${petter.skipped}`);
});

Deno.test("a clean reboot after a long shutdown: petted throughout, disarmed right before reboot(2)", async () => {
  const { device, petter, pass } = rig();
  petter.start();
  const fake = new FakePowerBackend();
  const power = disarmingPower(fake, petter);
  await power.sync(); // the shutdown's steps run for minutes, the loop alive
  await pass(5 * 60_000);
  assert.equal(device.state, "armed");
  assert.equal(fake.state, "running");
  void power.restart();
  assert.equal(device.state, "disarmed");
  assert.equal(fake.state, "restarting");
  await pass(10 * 60_000, false); // the kernel's own shutdown: nothing fires
  assert.equal(device.state, "disarmed");
  assert.equal(petter.state, "disarmed");
});

Deno.test("power off, halt and kexec disarm too; a second disarm is a no-op", () => {
  for (const end of ["powerOff", "halt", "kexec"] as const) {
    const { device, petter } = rig();
    petter.start();
    const fake = new FakePowerBackend();
    fake.kexecStaged = true;
    void disarmingPower(fake, petter)[end]();
    assert.equal(device.state, "disarmed", end);
    petter.disarm();
    assert.equal(device.faults.callsOf("disarm").length, 1);
  }
});

Deno.test("a refused timeout keeps the driver's and still pets", async () => {
  const { device, petter, logger, pass } = rig();
  device.faults.failNext("setTimeout", "EINVAL");
  petter.start();
  assert.equal(petter.timeoutS, 180);
  assert.ok(logger.lines.some((l) => /timeout 60 s refused/.test(l)));
  await pass(10 * 60_000);
  assert.equal(device.state, "armed");
});

Deno.test("a pet that fails disarms the device instead of rebooting a healthy node", async () => {
  const { device, petter, logger, pass } = rig();
  petter.start();
  device.faults.failNext("keepalive", "EIO");
  await pass(15_000);
  assert.equal(petter.state, "failed");
  assert.equal(device.state, "disarmed");
  assert.ok(logger.lines.some((l) => /cannot pet the watchdog; disarming it/.test(l)));
});
