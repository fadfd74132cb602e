import assert from "node:assert/strict";
import { NativeMemoryBackend } from "./backend_native.ts";

/** Pss and RssFile of this process, in KiB. */
async function residentFile(): Promise<{ pssFile: number; rssFile: number }> {
  const rollup = await Deno.readTextFile("/proc/self/smaps_rollup");
  const status = await Deno.readTextFile("/proc/self/status");
  const kib = (text: string, field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { pssFile: kib(rollup, "Pss_File"), rssFile: kib(status, "RssFile") };
}

Deno.test("paging out this process's file mappings advises them all and lowers its resident file pages", async () => {
  const before = await residentFile();
  const report = new NativeMemoryBackend().pageOutFileMappings();
  const after = await residentFile();
  assert.ok(report.ranges > 0, JSON.stringify(report));
  assert.ok(report.bytes >= 10 << 20, `the deno binary alone is mapped: ${report.bytes}`);
  // Pages shared with other processes (another deno on the host) stay: only this process's
  // exclusive share must go down.
  assert.ok(
    after.pssFile < before.pssFile,
    `Pss_File ${before.pssFile} → ${after.pssFile} KiB, RssFile ${before.rssFile} → ${after.rssFile}`,
  );
});
