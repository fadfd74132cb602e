/**
 * One suite both clock backends pass. The native backend runs it read-only:
 * a test never sets or slews the host's clock (`mutates: false`).
 * @module
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { type ClockBackend, STA, toNanoseconds } from "./backend.ts";

/** Register the suite's tests under `name`. */
export function clockBackendConformance(
  name: string,
  make: () => ClockBackend,
  options: { ignore?: boolean; mutates: boolean },
): void {
  const test = (title: string, fn: (b: ClockBackend) => Promise<void> | void) =>
    Deno.test({ name: `${name}: ${title}`, ignore: options.ignore, fn: () => fn(make()) });

  test("clocks read sanely: monotonic never goes back, boottime ≥ monotonic", (b) => {
    const m1 = toNanoseconds(b.read("monotonic"));
    const boot = toNanoseconds(b.read("boottime"));
    const m2 = toNanoseconds(b.read("monotonic"));
    assert.ok(m2 >= m1);
    assert.ok(boot >= m1);
    const wall = b.read("realtime");
    assert.ok(wall.nsec >= 0 && wall.nsec < 1e9);
    assert.ok(Math.abs(wall.sec * 1000 - Date.now()) < 60_000, "realtime far from Date.now()");
  });

  test("adjtimex reads the NTP state", (b) => {
    const s = b.adjust();
    assert.ok(s.state >= 0 && s.state <= 5, `state ${s.state}`);
    assert.ok(s.tick > 0);
  });

  test("invalid requests are typed EINVAL errors", async (b) => {
    assert.throws(
      () => b.adjust({ offsetNs: 1, singleshotUs: 1 }),
      (e) => isSysError(e, "EINVAL") && e.op === "adjtimex",
    );
    assert.throws(
      () => b.read("tai" as "realtime"),
      (e) => isSysError(e, "EINVAL") && e.op === "clock_gettime",
    );
    await assert.rejects(
      b.setRealtime({ sec: 1, nsec: 2e9 }),
      (e) => isSysError(e, "EINVAL") && e.op === "clock_settime",
    );
  });

  // Registered either way, so a read-only run counts it as ignored rather than hiding it.
  const mutating = (title: string, fn: (b: ClockBackend) => Promise<void> | void) =>
    Deno.test({
      name: `${name}: ${title}${
        options.mutates ? "" : " (sets the clock: never on the build host)"
      }`,
      ignore: options.ignore || !options.mutates,
      fn: () => fn(make()),
    });

  mutating("step, slew and status change the clock and state", async (b) => {
    await b.setRealtime({ sec: 1_800_000_000, nsec: 5 });
    assert.equal(b.read("realtime").sec, 1_800_000_000);
    const s = b.adjust({ status: STA.PLL, offsetNs: 1_000_000, maxErrorUs: 1000 });
    assert.equal(s.state, 0);
    assert.ok(s.status & STA.PLL);
    assert.equal(s.maxErrorUs, 1000);
  });
}
