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

Deno.test("a slow subscriber is ended, never blocking emit", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe({ capacity: 2 });
  for (let i = 0; i < 5; i++) bus.emit("task", `t${i}`, "done");
  assert.equal(bus.subscriberCount, 0);
  assert.equal((await sub.next()).done, true);
});

Deno.test("aborting the signal ends a waiting subscriber", async () => {
  const bus = new EventBus();
  const abort = new AbortController();
  const sub = bus.subscribe({ signal: abort.signal });
  const pending = sub.next();
  abort.abort();
  assert.equal((await pending).done, true);
});
