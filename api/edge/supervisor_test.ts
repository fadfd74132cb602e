import { deepEqual } from "node:assert/strict";
import { FakeProcessBackend } from "../../platform/process/mod.ts";
import { FakeClock } from "../../runtime/mod.ts";
import { ApidSupervisor, type ApidSupervisorEvent } from "./supervisor.ts";

function setup() {
  const clock = new FakeClock();
  const backend = new FakeProcessBackend({ clock });
  backend.define("apid", (p) => p.writeLine("stdout", `{"apid":"ready","port":50000}`));
  const events: ApidSupervisorEvent[] = [];
  const sup = new ApidSupervisor({
    backend,
    spec: { argv: ["apid"] },
    clock,
    initialBackoffMs: 100,
    maxBackoffMs: 400,
    resetAfterMs: 10_000,
    stopGraceMs: 1000,
    onEvent: (e) => events.push(e),
  });
  return { clock, backend, events, sup };
}

Deno.test("apid is restarted with capped exponential backoff", async () => {
  const { clock, backend, events, sup } = setup();
  const ready = sup.nextReady();
  sup.start();
  deepEqual((await ready).port, 50000);
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    const p = await backend.waitForSpawn((p) => p.alive);
    p.killedBy("SIGKILL");
    await clock.waitForSleepers(1);
    delays.push(clock.pendingDelays()[0]);
    await clock.advance(clock.pendingDelays()[0]);
  }
  deepEqual(delays, [100, 200, 400, 400, 400]);
  deepEqual(sup.restarts, 5);
  await backend.waitForSpawn((p) => p.alive);
  await sup.stop();
  deepEqual(backend.running().length, 0);
  deepEqual(events.filter((e) => e.kind === "exited").length, 6);
  await backend.close();
});

Deno.test("a long run resets the backoff; stop escalates to SIGKILL after the grace", async () => {
  const { clock, backend, sup } = setup();
  sup.start();
  let p = await backend.waitForSpawn((p) => p.alive);
  p.exit(1);
  await clock.waitForSleepers(1);
  await clock.advance(100);
  p = await backend.waitForSpawn((p) => p.alive);
  await clock.advance(20_000);
  p.exit(1);
  await clock.waitForSleepers(1);
  deepEqual(clock.pendingDelays(), [100]);
  await clock.advance(100);
  p = await backend.waitForSpawn((p) => p.alive);
  p.ignore("SIGTERM");
  const stopped = sup.stop();
  await clock.waitForSleepers(1);
  await clock.advance(1000);
  await stopped;
  deepEqual(p.signals, ["SIGTERM", "SIGKILL"]);
  await backend.close();
});
