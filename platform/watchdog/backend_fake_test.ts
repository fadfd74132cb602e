import assert from "node:assert/strict";
import { FakeClock } from "../../runtime/mod.ts";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeWatchdog, FakeWatchdogBackend } from "./backend_fake.ts";

Deno.test("the fake fires one timeout after the last pet, as softdog does", async () => {
  const clock = new FakeClock();
  const d = new FakeWatchdog(clock, { timeoutS: 10 });
  await clock.advance(9_000);
  d.keepalive();
  await clock.advance(9_999);
  assert.equal(d.state, "armed");
  await clock.advance(1);
  assert.equal(d.state, "fired");
  assert.throws(() => d.keepalive(), (e) => isSysError(e, "EIO"));
});

Deno.test("a disarmed fake never fires and refuses further calls with EBADF", async () => {
  const clock = new FakeClock();
  const d = new FakeWatchdog(clock, { timeoutS: 10 });
  d.disarm();
  await clock.advance(60_000);
  assert.equal(d.state, "disarmed");
  assert.throws(() => d.keepalive(), (e) => isSysError(e, "EBADF"));
});

Deno.test("injected faults, the inherited device handed out once, none when asked", () => {
  const clock = new FakeClock();
  const b = new FakeWatchdogBackend(clock, { timeoutS: 30 });
  b.faults.failNext("keepalive", "EIO");
  const d = b.inherited()!;
  assert.equal(d.info.timeoutS, 30);
  assert.throws(() => d.keepalive(), (e) => isSysError(e, "EIO"));
  d.keepalive();
  assert.equal(b.inherited(), undefined);
  assert.equal(new FakeWatchdogBackend(clock, false).inherited(), undefined);
  assert.equal(b.open("/dev/watchdog").info.identity, "Software Watchdog");
});
