import assert from "node:assert/strict";
import { CountingUeventBackend } from "./counting.ts";
import { FakeUeventBackend } from "./backend_fake.ts";

const add = { action: "add", devpath: "/devices/virtual/block/loop1", subsystem: "block" };

Deno.test("CountingUeventBackend: totals keep growing across a closed and a new subscription", async () => {
  const fake = new FakeUeventBackend();
  const counting = new CountingUeventBackend(fake);
  const first = counting.subscribe({ capacity: 2 });
  for (let i = 0; i < 3; i++) fake.inject(add); // the third is dropped
  fake.garbage("rejected");
  fake.garbage("foreign");
  const batch = await first.next(0);
  assert.equal(batch?.events.length, 2);
  assert.equal(batch?.resync, true);
  first.close();
  first.close(); // closing twice counts once
  const second = counting.subscribe();
  fake.inject(add);
  assert.deepEqual(counting.totals(), { received: 3, dropped: 1, rejected: 1, foreign: 1 });
  assert.equal(counting.subscriptions, 2);
  second.close();
  assert.deepEqual(counting.totals(), { received: 3, dropped: 1, rejected: 1, foreign: 1 });
  assert.equal(fake.subscriptions, 0);
});
