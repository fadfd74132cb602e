/**
 * System-wide counters: /proc/stat (CPU per core, context switches, forks),
 * /proc/loadavg, /proc/uptime, /proc/diskstats and /proc/net/dev.
 * @module
 */
import { CLOCK_TICKS, type ProcBackend } from "./backend.ts";

/** Seconds one CPU (or all: `cpu`) spent in each state since boot. */
export interface CpuTimes {
  readonly cpu: string;
  readonly user: number;
  readonly nice: number;
  readonly system: number;
  readonly idle: number;
  readonly iowait: number;
  readonly irq: number;
  readonly softirq: number;
  readonly steal: number;
}

/** /proc/stat. */
export interface KernelStat {
  readonly total: CpuTimes;
  readonly cpus: readonly CpuTimes[];
  readonly contextSwitches: number;
  readonly processesCreated: number;
  readonly processesRunning: number;
  readonly processesBlocked: number;
}

/** Parses /proc/stat. Pure. @throws RangeError without the `cpu` line. */
export function parseKernelStat(text: string): KernelStat {
  const cpus: CpuTimes[] = [];
  let total: CpuTimes | undefined;
  const scalars = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [key, ...values] = line.trim().split(/\s+/);
    if (/^cpu\d*$/.test(key)) {
      const [user, nice, system, idle, iowait, irq, softirq, steal] = [0, 1, 2, 3, 4, 5, 6, 7].map(
        (i) => Number(values[i] ?? 0) / CLOCK_TICKS,
      );
      const t = { cpu: key, user, nice, system, idle, iowait, irq, softirq, steal };
      if (key === "cpu") total = t;
      else cpus.push(t);
    } else if (values.length === 1) scalars.set(key, Number(values[0]));
  }
  if (!total) throw new RangeError("/proc/stat has no cpu line");
  return {
    total,
    cpus,
    contextSwitches: scalars.get("ctxt") ?? 0,
    processesCreated: scalars.get("processes") ?? 0,
    processesRunning: scalars.get("procs_running") ?? 0,
    processesBlocked: scalars.get("procs_blocked") ?? 0,
  };
}

/** The busy share 0..100 of `now` since `before` (everything but idle and iowait). Pure. */
export function cpuUsagePercent(before: CpuTimes, now: CpuTimes): number {
  const sum = (t: CpuTimes) =>
    t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal;
  const total = sum(now) - sum(before);
  if (total <= 0) return 0;
  const idle = now.idle + now.iowait - before.idle - before.iowait;
  return Math.min(100, Math.max(0, (100 * (total - idle)) / total));
}

/** /proc/loadavg. */
export interface LoadAverage {
  readonly load1: number;
  readonly load5: number;
  readonly load15: number;
  readonly running: number;
  readonly total: number;
}

/** Parses /proc/loadavg (`0.10 0.20 0.30 1/123 4567`). Pure. */
export function parseLoadavg(text: string): LoadAverage {
  const [l1, l5, l15, rt] = text.trim().split(/\s+/);
  const [running, total] = (rt ?? "0/0").split("/").map(Number);
  return { load1: Number(l1), load5: Number(l5), load15: Number(l15), running, total };
}

/** One block device's I/O since boot. */
export interface DiskStats {
  readonly device: string;
  readonly reads: number;
  readonly readBytes: number;
  readonly writes: number;
  readonly writtenBytes: number;
  readonly inFlight: number;
  readonly ioMs: number;
}

/**
 * Parses /proc/diskstats (sectors are 512 bytes whatever the device's block
 * size). Pure.
 */
export function parseDiskstats(text: string): DiskStats[] {
  const out: DiskStats[] = [];
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const n = (i: number) => Number(f[i]);
    out.push({
      device: f[2],
      reads: n(3),
      readBytes: n(5) * 512,
      writes: n(7),
      writtenBytes: n(9) * 512,
      inFlight: n(11),
      ioMs: n(12),
    });
  }
  return out;
}

/** One link's counters. */
export interface NetDevStats {
  readonly link: string;
  readonly rxBytes: number;
  readonly rxPackets: number;
  readonly rxErrors: number;
  readonly rxDropped: number;
  readonly txBytes: number;
  readonly txPackets: number;
  readonly txErrors: number;
  readonly txDropped: number;
}

/** Parses /proc/net/dev (two header lines, then `name: 16 counters`). Pure. */
export function parseNetDev(text: string): NetDevStats[] {
  const out: NetDevStats[] = [];
  for (const line of text.split("\n")) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const f = line.slice(i + 1).trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some(Number.isNaN)) continue;
    out.push({
      link: line.slice(0, i).trim(),
      rxBytes: f[0],
      rxPackets: f[1],
      rxErrors: f[2],
      rxDropped: f[3],
      txBytes: f[8],
      txPackets: f[9],
      txErrors: f[10],
      txDropped: f[11],
    });
  }
  return out;
}

/** Seconds since boot from /proc/uptime. Pure. */
export function parseUptime(text: string): number {
  return Number(text.trim().split(/\s+/)[0]);
}

/** Everything above, read now. */
export interface SystemStats {
  readonly stat: KernelStat;
  readonly load: LoadAverage;
  readonly uptimeSeconds: number;
  readonly disks: readonly DiskStats[];
  readonly links: readonly NetDevStats[];
}

/** Reads the system counters. @throws ProcError, RangeError on a malformed /proc/stat */
export async function readSystemStats(proc: ProcBackend): Promise<SystemStats> {
  const [stat, load, uptime, disks, links] = await Promise.all([
    proc.readText("stat"),
    proc.readText("loadavg"),
    proc.readText("uptime"),
    proc.readText("diskstats"),
    proc.readText("net/dev"),
  ]);
  return {
    stat: parseKernelStat(stat),
    load: parseLoadavg(load),
    uptimeSeconds: parseUptime(uptime),
    disks: parseDiskstats(disks),
    links: parseNetDev(links),
  };
}
