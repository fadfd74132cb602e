/**
 * When machined hands its malloc heap's free pages back (platform/memory's
 * MallocBackend): every minute, when the arenas keep at least a few MiB free.
 * glibc's main arena gives memory back only from the top of its brk heap, so
 * a heap that grew under load (a soak's config changes, a Watch flood) stays
 * resident once anything near its top is still in use, although most of it
 * is free; malloc_trim(0) releases the whole free pages inside it as well
 * (docs/decisions.md, "machined trims its malloc heap"). Node and dev mode
 * both run it: it touches nothing but machined's own heap.
 * @module
 */
import type { Logger } from "../logs/mod.ts";
import type { MallocBackend, MallocHeap } from "../platform/memory/mod.ts";

/** When a trim runs. */
export interface MallocTrimSchedule {
  /** The first look, after machined starts it (once the node reached its stage). */
  firstAfterMs: number;
  /** Between looks at the heap. */
  everyMs: number;
  /** A look trims only when the arenas keep at least this many free bytes. */
  minFreeBytes: number;
}

/**
 * The node's schedule: a first look 25 s after the stage, when boot's churn is
 * over and just before the first page-out (boot/page_out.ts, 30 s), so that
 * pass's console line reads what both gave back; then a look every minute. A
 * trim when 4 MiB or more are free.
 */
export const MALLOC_TRIM_SCHEDULE: MallocTrimSchedule = {
  firstAfterMs: 25_000,
  everyMs: 60_000,
  minFreeBytes: 4 << 20,
};

/** Whether a heap is worth a trim: enough free bytes that are not simply its top. Pure. */
export function shouldTrim(heap: MallocHeap, minFreeBytes: number): boolean {
  return heap.free >= minFreeBytes;
}

/** What one trim did, for the debug log. */
export interface MallocTrimReport {
  /** Free bytes before and after, MiB (one decimal). */
  freeMiB: [number, number];
  /** Arena bytes before and after, MiB. */
  arenaMiB: [number, number];
  /** How long malloc_trim took, ms. */
  ms: number;
}

/** Trims `malloc` once if {@link shouldTrim}; undefined when it did not. */
export function trimOnce(
  malloc: MallocBackend,
  minFreeBytes: number,
): MallocTrimReport | undefined {
  const before = malloc.heap();
  if (!shouldTrim(before, minFreeBytes)) return undefined;
  const t0 = performance.now();
  malloc.trim();
  const ms = performance.now() - t0;
  const after = malloc.heap();
  const mib = (b: number) => Math.round(b / 2 ** 20 * 10) / 10;
  return {
    freeMiB: [mib(before.free), mib(after.free)],
    arenaMiB: [mib(before.arena), mib(after.arena)],
    ms: Math.round(ms * 100) / 100,
  };
}

/** Options of {@link startMallocTrim}. */
export interface MallocTrimOptions {
  malloc: MallocBackend;
  logger: Logger;
  schedule?: MallocTrimSchedule;
}

/** Starts the looks; returns the function that stops them. Never throws: a failed trim is logged. */
export function startMallocTrim(o: MallocTrimOptions): () => void {
  const schedule = o.schedule ?? MALLOC_TRIM_SCHEDULE;
  const look = () => {
    try {
      const report = trimOnce(o.malloc, schedule.minFreeBytes);
      if (report) o.logger.log("debug", "memory", "trimmed the malloc heap", { ...report });
    } catch (e) {
      o.logger.warn("memory", "malloc trim failed", { error: e });
    }
  };
  let timer = setTimeout(function first() {
    look();
    timer = setInterval(look, schedule.everyMs);
    Deno.unrefTimer(timer);
  }, schedule.firstAfterMs);
  Deno.unrefTimer(timer);
  return () => clearTimeout(timer);
}
