/**
 * /proc/meminfo parsed: every line by name, in bytes for `kB` lines.
 * @module
 */
import type { ProcBackend } from "./backend.ts";

/** /proc/meminfo in bytes (plain counts for lines without a unit). */
export interface MemInfo {
  readonly totalBytes: number;
  readonly freeBytes: number;
  readonly availableBytes: number;
  readonly buffersBytes: number;
  readonly cachedBytes: number;
  readonly shmemBytes: number;
  readonly swapTotalBytes: number;
  readonly swapFreeBytes: number;
  /** Every line by its name (`MemTotal`, `Slab`, `HugePages_Total`...). */
  readonly fields: Readonly<Record<string, number>>;
}

/** Parses meminfo text; unknown or malformed lines are skipped. Pure. */
export function parseMeminfo(text: string): MemInfo {
  const fields: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const m = /^([^:\s]+):\s+(\d+)(?:\s+kB)?\s*$/.exec(line);
    if (!m) continue;
    fields[m[1]] = Number(m[2]) * (line.trimEnd().endsWith("kB") ? 1024 : 1);
  }
  const f = (name: string) => fields[name] ?? 0;
  return {
    totalBytes: f("MemTotal"),
    freeBytes: f("MemFree"),
    availableBytes: f("MemAvailable"),
    buffersBytes: f("Buffers"),
    cachedBytes: f("Cached"),
    shmemBytes: f("Shmem"),
    swapTotalBytes: f("SwapTotal"),
    swapFreeBytes: f("SwapFree"),
    fields,
  };
}

/** Reads and parses `meminfo`. @throws ProcError */
export async function readMeminfo(proc: ProcBackend): Promise<MemInfo> {
  return parseMeminfo(await proc.readText("meminfo"));
}
