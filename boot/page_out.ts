/**
 * When machined pages out its file mappings (platform/memory): once boot has
 * settled, then at a long interval. Boot touches most of the Deno binary once
 * (the snapshot deserializer, V8's compilers warming up, module evaluation)
 * and never again; those clean pages are machined's largest resident part
 * after its heap, and the kernel would only reclaim them under pressure.
 * Paging them out keeps machined's PSS at its working set; what is used again
 * faults back in from the page cache or the root image (docs/decisions.md,
 * "machined pages out what boot touched once").
 * @module
 */
import type { Logger } from "../logs/mod.ts";
import type { MemoryBackend, PageOutReport } from "../platform/memory/mod.ts";

/** When the passes run. */
export interface PageOutSchedule {
  /** After the node reached its stage (running or maintenance). */
  firstAfterMs: number;
  /** Between later passes (what an upgrade or a flood touched once). */
  everyMs: number;
}

/** The node's schedule: 30 s after boot, then every 10 minutes. */
export const PAGE_OUT_SCHEDULE: PageOutSchedule = { firstAfterMs: 30_000, everyMs: 600_000 };

/** Resident figures of this process, in KiB (undefined when /proc cannot say). */
export interface ResidentKiB {
  pss?: number;
  rssFile?: number;
  /** The node's MemAvailable (/proc/meminfo), read with them. */
  memAvailable?: number;
}

/** Reads Pss (smaps_rollup) and RssFile (status) of this process, and the node's MemAvailable. */
export async function residentKiB(): Promise<ResidentKiB> {
  const field = async (path: string, name: string) => {
    try {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(await Deno.readTextFile(path));
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    pss: await field("/proc/self/smaps_rollup", "Pss"),
    rssFile: await field("/proc/self/status", "RssFile"),
    memAvailable: await field("/proc/meminfo", "MemAvailable"),
  };
}

/** The console line the boot test reads. Pure. */
export function pageOutLine(
  pass: number,
  r: PageOutReport,
  before: ResidentKiB,
  after: ResidentKiB,
): string {
  return `machined: page-out pass=${pass} ranges=${r.ranges} refused=${r.refused} ` +
    `mapped_mib=${(r.bytes / 2 ** 20).toFixed(1)} pss_kib=${before.pss}->${after.pss} ` +
    `rss_file_kib=${before.rssFile}->${after.rssFile}` +
    (after.memAvailable === undefined ? "" : ` mem_available_kib=${after.memAvailable}`);
}

/** Options of {@link startPageOut}. */
export interface PageOutOptions {
  memory: MemoryBackend;
  logger: Logger;
  schedule?: PageOutSchedule;
  /** Where the first pass's line goes (the console, for the boot test). @default console.log */
  print?: (line: string) => void;
  /** Reads the figures around a pass. @default {@link residentKiB} */
  resident?: () => Promise<ResidentKiB>;
}

/** Starts the passes; returns the function that stops them. Never throws: a failed pass is logged. */
export function startPageOut(o: PageOutOptions): () => void {
  const schedule = o.schedule ?? PAGE_OUT_SCHEDULE;
  const resident = o.resident ?? residentKiB;
  let pass = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const run = async () => {
    pass++;
    try {
      const before = await resident();
      const report = o.memory.pageOutFileMappings();
      const after = await resident();
      const line = pageOutLine(pass, report, before, after);
      if (pass === 1) (o.print ?? console.log)(line);
      o.logger.log("debug", "memory", "paged out file mappings", {
        pass,
        ...report,
        before,
        after,
      });
    } catch (e) {
      o.logger.warn("memory", "page-out failed", { pass, error: e });
    }
    timer = setTimeout(run, schedule.everyMs);
  };
  timer = setTimeout(run, schedule.firstAfterMs);
  return () => clearTimeout(timer);
}
