import assert from "node:assert/strict";
import { FakeClock } from "../runtime/mod.ts";
import { FakeWatchdogBackend } from "../platform/watchdog/mod.ts";
import { FakePowerBackend } from "../platform/power/mod.ts";
import { parseCmdline } from "../layout/mod.ts";
import { watchdogTimeoutS, withNodeWatchdog } from "./node_watchdog.ts";
import { HANG_WORD, hangAfterS } from "./test_hang.ts";
import { memoryLogger } from "./testing.ts";

Deno.test("the running timeout comes from machined.watchdog=, 60 s by default, off disables", () => {
  assert.equal(watchdogTimeoutS(parseCmdline("console=ttyS0")), 60);
  assert.equal(watchdogTimeoutS(parseCmdline("machined.watchdog=20")), 20);
  assert.equal(watchdogTimeoutS(parseCmdline("machined.watchdog=off")), undefined);
  assert.equal(watchdogTimeoutS(parseCmdline("machined.watchdog=banana")), 60);
});

Deno.test("no inherited watchdog (dev mode, a probe image): the backends come back unchanged", () => {
  const backends = { power: new FakePowerBackend() };
  const out = withNodeWatchdog(backends, memoryLogger(), {
    backend: new FakeWatchdogBackend(new FakeClock(), false),
    cmdline: new Map(),
  });
  assert.equal(out, backends);
});

Deno.test("an inherited watchdog is petted and disarmed when the node reboots", () => {
  const backend = new FakeWatchdogBackend(new FakeClock());
  const fake = new FakePowerBackend();
  const out = withNodeWatchdog({ power: fake }, memoryLogger(), {
    backend,
    cmdline: parseCmdline("machined.watchdog=30"),
    testImage: false,
  });
  const device = backend.device()!;
  assert.equal(device.timeoutS, 30);
  assert.equal(device.state, "armed");
  void out.power.restart();
  assert.equal(device.state, "disarmed");
  assert.equal(fake.state, "restarting");
  // Only the first take-over gets the device.
  assert.equal(backend.inherited(), undefined);
});

Deno.test("machined.watchdog=off disarms what machined-init armed", () => {
  const backend = new FakeWatchdogBackend(new FakeClock());
  withNodeWatchdog({ power: new FakePowerBackend() }, memoryLogger(), {
    backend,
    cmdline: parseCmdline("machined.watchdog=off"),
  });
  assert.equal(backend.device()!.state, "disarmed");
});

Deno.test("a failing take-over boots on (reported)", () => {
  const backend = new FakeWatchdogBackend(new FakeClock());
  backend.faults.failNext("adopt", "EBADF");
  const logger = memoryLogger();
  const backends = { power: new FakePowerBackend() };
  assert.equal(withNodeWatchdog(backends, logger, { backend, cmdline: new Map() }), backends);
  assert.ok(logger.lines.some((l) => /cannot take over/.test(l)));
});

Deno.test("the hang hook needs both the command line word and a test image", () => {
  const logger = memoryLogger();
  const word = parseCmdline(`console=ttyS0 ${HANG_WORD}=5`);
  assert.equal(hangAfterS(word, false, logger), undefined);
  assert.ok(logger.lines.some((l) => /ignored: this image was not built for tests/.test(l)));
  assert.equal(hangAfterS(word, true, logger), 5);
  assert.equal(hangAfterS(parseCmdline("console=ttyS0"), true, logger), undefined);
});
