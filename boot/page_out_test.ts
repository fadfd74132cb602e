import assert from "node:assert/strict";
import { createLogger } from "../logs/mod.ts";
import { FakeMemoryBackend } from "../platform/memory/mod.ts";
import { MALLOC_TRIM_SCHEDULE } from "../node/mod.ts";
import { PAGE_OUT_SCHEDULE, pageOutLine, residentKiB, startPageOut } from "./page_out.ts";

const quietLogger = () => createLogger({ console: false });

Deno.test("the first pass prints its line, later passes keep running, a failed pass is only logged", async () => {
  const memory = new FakeMemoryBackend({ ranges: 4, bytes: 3 << 20, refused: 1 });
  memory.faults.failNext("pageOutFileMappings", "EPERM", { when: () => memory.passes === 1 });
  const lines: string[] = [];
  let reads = 0;
  const logger = quietLogger();
  const stop = startPageOut({
    memory,
    logger,
    schedule: { firstAfterMs: 1, everyMs: 5 },
    print: (l) => lines.push(l),
    resident: () =>
      Promise.resolve({
        pss: 1000 - 100 * (reads % 2),
        rssFile: 500 - 50 * (reads % 2),
        memAvailable: 700_000 + 1000 * (reads++ % 2),
      }),
  });
  try {
    for (let i = 0; i < 200 && memory.passes < 3; i++) await new Promise((r) => setTimeout(r, 5));
  } finally {
    stop();
  }
  assert.ok(memory.passes >= 3, `passes: ${memory.passes}`);
  assert.deepEqual(lines, [
    "machined: page-out pass=1 ranges=4 refused=1 mapped_mib=3.0 pss_kib=1000->900 rss_file_kib=500->450 mem_available_kib=701000",
  ]);
});

Deno.test("pageOutLine says what was unknown", () => {
  assert.equal(
    pageOutLine(2, { ranges: 1, bytes: 1 << 20, refused: 0 }, {}, { pss: 5 }),
    "machined: page-out pass=2 ranges=1 refused=0 mapped_mib=1.0 pss_kib=undefined->5 rss_file_kib=undefined->undefined",
  );
});

Deno.test("residentKiB reads this process's Pss and RssFile, and MemAvailable", async () => {
  const r = await residentKiB();
  assert.ok((r.pss ?? 0) > 0 && (r.rssFile ?? 0) > 0, JSON.stringify(r));
  assert.ok((r.memAvailable ?? 0) > 0, JSON.stringify(r));
});

Deno.test("the malloc heap's first trim comes before the first page-out, whose line reads both", () => {
  assert.ok(MALLOC_TRIM_SCHEDULE.firstAfterMs < PAGE_OUT_SCHEDULE.firstAfterMs);
  assert.equal(MALLOC_TRIM_SCHEDULE.firstAfterMs, 25_000);
});
