import assert from "node:assert/strict";
import { FakeClockBackend } from "./backend_fake.ts";
import { clockBackendConformance } from "./backend_conformance.ts";
import { STA, toNanoseconds } from "./backend.ts";

clockBackendConformance("FakeClockBackend", () => new FakeClockBackend(), { mutates: true });

Deno.test("fake clock: advance, suspend, one-shot slew", () => {
  const c = new FakeClockBackend(1_000);
  const boot0 = toNanoseconds(c.read("boottime"));
  const mono0 = toNanoseconds(c.read("monotonic"));
  c.advance(1000);
  c.advance(500, { suspended: true });
  assert.equal(toNanoseconds(c.read("monotonic")) - mono0, 1_000_000_000n);
  assert.equal(toNanoseconds(c.read("boottime")) - boot0, 1_500_000_000n);
  c.adjust({ singleshotUs: 250_000 });
  assert.deepEqual(c.read("realtime"), { sec: 2, nsec: 750_000_000 });
  assert.equal(c.adjust({ status: 0 }).state, 0);
  assert.equal(c.adjust({ status: STA.UNSYNC }).state, 5);
});
