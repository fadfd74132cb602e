import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";
import { superviseWatch, WATCH_BACKOFF, WATCH_HEALTHY_MS } from "./watch_supervisor.ts";

/** A watch whose runs the test ends one by one: fail(), or advance time and fail. */
function scriptedWatch() {
  const runs: Array<{ fail: (e: Error) => void }> = [];
  let started: () => void = () => {};
  return {
    runs,
    nextStart: () => new Promise<void>((r) => (started = r)),
    watch: (_wake: () => void, signal: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        signal.addEventListener("abort", () => resolve(), { once: true });
        runs.push({ fail: reject });
        started();
      }),
  };
}

Deno.test("superviseWatch: a failed watch restarts after 1, 2, 4 s; each failure wakes and is reported", async () => {
  const clock = new FakeClock();
  const abort = new AbortController();
  const w = scriptedWatch();
  const failures: Array<[string, number]> = [];
  let wakes = 0;
  let start = w.nextStart();
  const done = superviseWatch({
    watch: w.watch,
    wake: () => wakes++,
    signal: abort.signal,
    clock,
    onFailure: (e, ms) => failures.push([String(e), ms]),
  });
  for (const delay of [1_000, 2_000, 4_000]) {
    await start;
    start = w.nextStart();
    w.runs.at(-1)!.fail(new Error("ENOBUFS"));
    await clock.waitForSleepers(1);
    assert.deepEqual(clock.pendingDelays(), [delay]);
    await clock.advance(delay);
  }
  await start;
  assert.equal(w.runs.length, 4);
  assert.equal(wakes, 3);
  assert.deepEqual(failures.map(([, ms]) => ms), [1_000, 2_000, 4_000]);
  assert.match(failures[0][0], /ENOBUFS/);
  abort.abort();
  await done;
  assert.equal(w.runs.length, 4, "no restart after stop");
});

Deno.test("superviseWatch: the delay is capped, and resets after a watch that ran a healthy while", async () => {
  const clock = new FakeClock();
  const abort = new AbortController();
  const w = scriptedWatch();
  const delays: number[] = [];
  let start = w.nextStart();
  const done = superviseWatch({
    watch: w.watch,
    wake: () => {},
    signal: abort.signal,
    clock,
    onFailure: (_e, ms) => delays.push(ms),
  });
  for (let i = 0; i < 8; i++) {
    await start;
    start = w.nextStart();
    w.runs.at(-1)!.fail(new Error("down"));
    await clock.waitForSleepers(1);
    await clock.advance(clock.pendingDelays()[0]);
  }
  assert.equal(Math.max(...delays), WATCH_BACKOFF.maxMs);
  await start;
  start = w.nextStart();
  await clock.advance(WATCH_HEALTHY_MS);
  w.runs.at(-1)!.fail(new Error("down again"));
  await clock.waitForSleepers(1);
  assert.deepEqual(clock.pendingDelays(), [WATCH_BACKOFF.initialMs]);
  abort.abort();
  await done;
});

Deno.test("superviseWatch: a watch that returns is done (nothing to watch), not restarted", async () => {
  const clock = new FakeClock();
  let runs = 0;
  await superviseWatch({
    watch: () => {
      runs++;
      return Promise.resolve();
    },
    wake: () => {},
    signal: new AbortController().signal,
    clock,
    onFailure: () => assert.fail("not a failure"),
  });
  assert.equal(runs, 1);
  assert.equal(clock.pendingSleeps, 0);
});

Deno.test("superviseWatch: stopping during the delay ends it; a throwing observer does not", async () => {
  const clock = new FakeClock();
  const abort = new AbortController();
  let runs = 0;
  const done = superviseWatch({
    watch: () => {
      runs++;
      return Promise.reject(new Error("EPERM"));
    },
    wake: () => {},
    signal: abort.signal,
    clock,
    onFailure: () => {
      throw new Error("observer bug");
    },
  });
  await clock.waitForSleepers(1);
  abort.abort();
  await done;
  assert.equal(runs, 1);
});
