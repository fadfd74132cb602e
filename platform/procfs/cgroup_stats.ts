/**
 * A cgroup v2 directory's counters: memory.current, memory.max,
 * memory.events, cpu.stat, pids.current and pids.max, read through a
 * {@link ProcBackend} rooted at /sys/fs/cgroup. A file a controller does not
 * provide (not enabled for the cgroup) reads as absent, not an error.
 * @module
 */
import { isProcDenied, isProcGone, type ProcBackend } from "./backend.ts";

/** One cgroup's counters. */
export interface CgroupStats {
  /** Relative to the cgroup root, e.g. `machined/web`. */
  readonly path: string;
  readonly memoryCurrentBytes: number;
  /** Undefined when `max` or not available. */
  readonly memoryMaxBytes?: number;
  readonly memoryEvents: Readonly<Record<string, number>>;
  readonly cpuStat: Readonly<Record<string, number>>;
  readonly pidsCurrent: number;
  readonly pidsMax?: number;
}

/** `key value` lines (memory.events, cpu.stat) as a record. Pure. */
export function parseFlatKeyed(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/** A single-value file: a number, or undefined for `max`/empty. Pure. */
export function parseLimit(text: string | undefined): number | undefined {
  const t = text?.trim();
  return t && /^\d+$/.test(t) ? Number(t) : undefined;
}

/**
 * Reads the cgroup at `path`; undefined when the directory does not exist.
 * @throws ProcError for anything but a missing file
 */
export async function readCgroupStats(
  cgroups: ProcBackend,
  path: string,
): Promise<CgroupStats | undefined> {
  const read = async (file: string) => {
    try {
      return await cgroups.readText(path === "" ? file : `${path}/${file}`);
    } catch (e) {
      if (isProcGone(e) || isProcDenied(e)) return undefined;
      throw e;
    }
  };
  if (await read("cgroup.procs") === undefined) return undefined;
  const [current, max, events, cpu, pids, pidsMax] = await Promise.all(
    ["memory.current", "memory.max", "memory.events", "cpu.stat", "pids.current", "pids.max"]
      .map(read),
  );
  return {
    path,
    memoryCurrentBytes: parseLimit(current) ?? 0,
    ...optionalField("memoryMaxBytes", parseLimit(max)),
    memoryEvents: parseFlatKeyed(events ?? ""),
    cpuStat: parseFlatKeyed(cpu ?? ""),
    pidsCurrent: parseLimit(pids) ?? 0,
    ...optionalField("pidsMax", parseLimit(pidsMax)),
  };
}

function optionalField<K extends string>(key: K, v: number | undefined): { [P in K]?: number } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: number };
}
