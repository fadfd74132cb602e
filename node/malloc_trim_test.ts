import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { FakeMallocBackend } from "../platform/memory/mod.ts";
import { shouldTrim, startMallocTrim, trimOnce } from "./malloc_trim.ts";

const MiB = 1 << 20;

Deno.test("a heap is trimmed only when it keeps enough free bytes", () => {
  const heap = { arena: 20 * MiB, mmapped: 0, inUse: 17 * MiB, free: 3 * MiB, topFree: 0 };
  assert.equal(shouldTrim(heap, 4 * MiB), false);
  assert.equal(shouldTrim({ ...heap, free: 4 * MiB }, 4 * MiB), true);
});

Deno.test("trimOnce reports the free and arena bytes before and after", () => {
  const malloc = new FakeMallocBackend({ arena: 30 * MiB, inUse: 18 * MiB, free: 12 * MiB });
  const r = trimOnce(malloc, 4 * MiB);
  assert.deepEqual({ ...r, ms: 0 }, { freeMiB: [12, 0], arenaMiB: [30, 18], ms: 0 });
  assert.equal(trimOnce(malloc, 4 * MiB), undefined, "nothing free: no second trim");
  assert.equal(malloc.trims, 1);
});

Deno.test("the schedule keeps trimming a heap that grows again, and a failed trim is only logged", async () => {
  const malloc = new FakeMallocBackend({ arena: 30 * MiB, inUse: 18 * MiB, free: 12 * MiB });
  malloc.faults.failNext("trim", "EPERM", { when: () => malloc.trims === 0 });
  const logger = createLogger({ console: false, minLevel: "debug" });
  const stop = startMallocTrim({
    malloc,
    logger,
    schedule: { firstAfterMs: 2, everyMs: 2, minFreeBytes: MiB },
  });
  try {
    for (let i = 0; i < 200 && malloc.trims < 1; i++) await new Promise((r) => setTimeout(r, 2));
    malloc.set({ arena: 40 * MiB, free: 22 * MiB }); // the heap grew again
    for (let i = 0; i < 200 && malloc.trims < 2; i++) await new Promise((r) => setTimeout(r, 2));
  } finally {
    stop();
  }
  assert.equal(malloc.trims, 2);
  assert.equal(malloc.heap().free, 0);
  const lines = logger.ring.tail(10).map((l) => l.text).join("\n");
  assert.match(lines, /malloc trim failed/);
  assert.match(lines, /trimmed the malloc heap/);
});

Deno.test("the first look comes after firstAfterMs, not a whole interval later", async () => {
  const malloc = new FakeMallocBackend({ arena: 30 * MiB, inUse: 18 * MiB, free: 12 * MiB });
  const logger = createLogger({ console: false, minLevel: "debug" });
  const stop = startMallocTrim({
    malloc,
    logger,
    schedule: { firstAfterMs: 5, everyMs: 3_600_000, minFreeBytes: MiB },
  });
  try {
    for (let i = 0; i < 500 && malloc.trims < 1; i++) await new Promise((r) => setTimeout(r, 2));
  } finally {
    stop();
  }
  assert.equal(malloc.trims, 1, "trimmed once, long before the hour's interval");
});
