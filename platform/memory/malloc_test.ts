import assert from "node:assert/strict";
import { FakeMallocBackend, NativeMallocBackend } from "./mod.ts";

Deno.test("the native heap's figures are this process's and a trim never grows what is in use", () => {
  const malloc = new NativeMallocBackend();
  const before = malloc.heap();
  assert.ok(before.inUse > 1 << 20, JSON.stringify(before)); // Deno itself mallocs megabytes
  assert.ok(before.arena >= before.free, JSON.stringify(before));
  assert.equal(typeof malloc.trim(), "boolean");
  const after = malloc.heap();
  // Under `--parallel` other test modules run on threads of this process and
  // free into the same malloc between the two readings (2 MiB seen), so the
  // slack is wide: what is pinned is that a trim does not leave a heap's worth more.
  assert.ok(after.free <= before.free + (16 << 20), `${before.free} → ${after.free}`);
});

Deno.test("the fake gives its free bytes back on trim and injects failures", () => {
  const malloc = new FakeMallocBackend({ arena: 40 << 20, inUse: 30 << 20, free: 10 << 20 });
  assert.equal(malloc.trim(), true);
  assert.deepEqual(malloc.heap(), {
    arena: 30 << 20,
    mmapped: 0,
    inUse: 30 << 20,
    free: 0,
    topFree: 0,
  });
  assert.equal(malloc.trim(), false);
  assert.equal(malloc.trims, 2);
  malloc.faults.failNext("trim", "EPERM");
  assert.throws(() => malloc.trim());
});
