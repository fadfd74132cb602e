import assert from "node:assert/strict";
import { EventBus } from "./bus.ts";

Deno.test("subscribers get the replay they asked for, then live events in order", async () => {
  const bus = new EventBus(3);
  for (let i = 1; i <= 5; i++) bus.emit("task", `t${i}`, "done");
  assert.deepEqual(bus.history().map((e) => e.subject), ["t3", "t4", "t5"]);
  const sub = bus.subscribe({ tail: 2 });
  bus.emit("phase", "p", "started");
  const got = [];
  for (let i = 0; i < 3; i++) got.push((await sub.next()).value.subject);
  assert.deepEqual(got, ["t4", "t5", "p"]);
  sub.close();
  assert.equal(bus.subscriberCount, 0);
  const since = bus.subscribe({ sinceSeq: 4 });
  assert.deepEqual([(await since.next()).value.seq, (await since.next()).value.seq], [5, 6]);
  since.close();
});

Deno.test("a slow subscriber gets an explicit overflow, never blocking emit", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe({ capacity: 2 });
  for (let i = 0; i < 5; i++) bus.emit("task", `t${i}`, "done");
  // t0..t2 overflowed the queue of 2 and were dropped; t3 and t4 were queued after.
  const overflow = (await sub.next()).value;
  assert.equal(overflow.kind, "overflow");
  assert.equal(overflow.fields?.dropped, "3");
  assert.equal((await sub.next()).value.subject, "t3");
  assert.equal((await sub.next()).value.subject, "t4");
  bus.emit("task", "after", "done");
  assert.equal((await sub.next()).value.subject, "after");
  sub.close();
  assert.equal(bus.subscriberCount, 0);
});

Deno.test("whenSubscribers resolves once enough subscribers are attached, not before", async () => {
  const bus = new EventBus();
  let resolvedWith = -1;
  const waiting = bus.whenSubscribers(2).then(() => resolvedWith = bus.subscriberCount);
  const a = bus.subscribe();
  // Let every queued microtask and a macrotask run: one subscriber must not resolve it.
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(resolvedWith, -1, "resolved with only one subscriber");
  const b = bus.subscribe();
  await waiting;
  assert.equal(resolvedWith, 2);
  a.close();
  b.close();
});

Deno.test("aborting the signal ends a waiting subscriber", async () => {
  const bus = new EventBus();
  const abort = new AbortController();
  const sub = bus.subscribe({ signal: abort.signal });
  const pending = sub.next();
  abort.abort();
  assert.equal((await pending).done, true);
});

Deno.test("events carry a monotonic time: durations between them survive a wall-clock step", () => {
  let wall = Date.UTC(2026, 0, 1);
  let mono = 1_000;
  const bus = new EventBus(100, () => wall, () => mono);
  const a = bus.emit("task", "provision", "started");
  wall -= 3_600_000; // SNTP steps the clock back an hour
  mono += 250;
  const b = bus.emit("task", "provision", "done");
  assert.equal(b.time - a.time, -3_600_000, "wall-clock differences are not durations");
  assert.equal(b.monoMs - a.monoMs, 250);
});
