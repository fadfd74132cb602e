/**
 * One process as /proc/PID shows it: stat, status, cmdline, cgroup and
 * (when readable) smaps_rollup. A process that exits between two reads is
 * skipped by {@link readProcesses}, never an error.
 * @module
 */
import { CLOCK_TICKS, isProcDenied, isProcGone, type ProcBackend } from "./backend.ts";

/** A process's facts at one moment. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  /** R, S, D, Z, T, I... */
  readonly state: string;
  readonly threads: number;
  /** User and system CPU time in seconds since it started. */
  readonly cpuSeconds: number;
  /** Seconds after boot at which it started. */
  readonly startSeconds: number;
  readonly comm: string;
  /** argv; empty for kernel threads. */
  readonly argv: readonly string[];
  readonly uid: number;
  readonly rssBytes: number;
  /** Unset when smaps_rollup is missing or not readable (another user's, without root). */
  readonly pssBytes?: number;
  /** The cgroup v2 path (`/machined/web`); `""` when unknown. */
  readonly cgroup: string;
}

/** The fields of /proc/PID/stat this module uses. Pure; undefined when malformed. */
export function parseStat(text: string): {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  utime: number;
  stime: number;
  threads: number;
  startTicks: number;
} | undefined {
  // comm may hold spaces and parentheses: it ends at the last ')'.
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const rest = text.slice(close + 2).trim().split(/\s+/);
  if (rest.length < 20) return undefined;
  const n = (i: number) => Number(rest[i - 3]);
  return {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: rest[0],
    ppid: n(4),
    utime: n(14),
    stime: n(15),
    threads: n(20),
    startTicks: n(22),
  };
}

/** `Key:\tvalue` lines of /proc/PID/status or smaps_rollup. Pure. */
export function parseKeyValues(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const i = line.indexOf(":");
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  return out;
}

/** A `1234 kB` value in bytes (0 when absent). Pure. */
export function kbToBytes(value: string | undefined): number {
  const m = /^(\d+)/.exec(value ?? "");
  return m ? Number(m[1]) * 1024 : 0;
}

/** The cgroup v2 path of a /proc/PID/cgroup text (`0::/path`); `""` without one. Pure. */
export function parseCgroupV2(text: string): string {
  for (const line of text.split("\n")) if (line.startsWith("0::")) return line.slice(3).trim();
  return "";
}

/** The numeric entries of /proc: every pid now. @throws ProcError */
export async function listPids(proc: ProcBackend): Promise<number[]> {
  return (await proc.list("")).filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);
}

/**
 * Reads one process; undefined when it is gone.
 * @throws ProcError for anything but a vanished process.
 */
export async function readProcess(
  proc: ProcBackend,
  pid: number,
  options: { pss?: boolean } = {},
): Promise<ProcessInfo | undefined> {
  try {
    const stat = parseStat(await proc.readText(`${pid}/stat`));
    if (!stat) return undefined;
    const status = parseKeyValues(await proc.readText(`${pid}/status`));
    const argv = (await proc.readText(`${pid}/cmdline`)).split("\0").filter((a, i, all) =>
      a !== "" || i < all.length - 1
    );
    const cgroup = parseCgroupV2(await optional(proc.readText(`${pid}/cgroup`), ""));
    const pss = options.pss === false ? undefined : await readPss(proc, pid);
    return {
      pid,
      ppid: stat.ppid,
      state: stat.state,
      threads: stat.threads,
      cpuSeconds: (stat.utime + stat.stime) / CLOCK_TICKS,
      startSeconds: stat.startTicks / CLOCK_TICKS,
      comm: stat.comm,
      argv,
      uid: Number((status.get("Uid") ?? "0").split(/\s+/)[0]),
      rssBytes: kbToBytes(status.get("VmRSS")),
      ...(pss === undefined ? {} : { pssBytes: pss }),
      cgroup,
    };
  } catch (e) {
    if (isProcGone(e)) return undefined;
    throw e;
  }
}

/** Every process now, by pid; those that exit meanwhile are left out. @throws ProcError */
export async function readProcesses(
  proc: ProcBackend,
  options: { pss?: boolean } = {},
): Promise<ProcessInfo[]> {
  const found = await mapConcurrent(await listPids(proc), (pid) => readProcess(proc, pid, options));
  return found.filter((p): p is ProcessInfo => p !== undefined);
}

/** Processes read at once by {@link mapConcurrent}. */
const READ_CONCURRENCY = 8;

/**
 * `f` over `items` with a few calls in flight at once, results in order: the
 * latency of a few /proc reads, not their sum, with the open files bounded.
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  f: (item: T) => Promise<R>,
  concurrency = READ_CONCURRENCY,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

/** PSS from smaps_rollup; undefined when missing or not readable. */
async function readPss(proc: ProcBackend, pid: number): Promise<number | undefined> {
  try {
    const kv = parseKeyValues(await proc.readText(`${pid}/smaps_rollup`));
    return kv.has("Pss") ? kbToBytes(kv.get("Pss")) : undefined;
  } catch (e) {
    if (isProcGone(e) || isProcDenied(e)) return undefined;
    throw e;
  }
}

async function optional<T>(p: Promise<T>, fallback: T): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isProcGone(e) || isProcDenied(e)) return fallback;
    throw e;
  }
}
