/**
 * The Observer: what the observability RPCs report, read from /proc (and
 * cgroupfs) through a {@link ProcBackend} and joined with what machined knows
 * (its services and their pids, apid's pid). It holds the previous samples
 * for CPU rates; everything else is read at each call.
 * @module
 */
import {
  type CpuTimes,
  cpuUsagePercent,
  type MemInfo,
  type ProcBackend,
  type ProcessInfo,
  readCgroupStats,
  readMeminfo,
  readProcesses,
  readSystemStats,
  type SystemStats,
} from "../platform/procfs/mod.ts";
import type { FsUsageReader } from "../platform/procfs/mod.ts";
import { assignOwners } from "./owners.ts";
import {
  type CgroupReport,
  type MountReport,
  readMounts,
  readServiceCgroups,
  readSocketReport,
  type SocketReport,
} from "./views.ts";
import { Sampler } from "./sampler.ts";

/** What the observer needs from machined. */
export interface ObserverDeps {
  /** /proc. */
  readonly proc: ProcBackend;
  /** Each service's id and main pid now (the supervisor's ServiceStatus). */
  readonly services?: () => readonly { readonly id: string; readonly pid: number | null }[];
  /** Named components by name: `machined` (this process), `apid`. */
  readonly components?: () => Readonly<Record<string, number | undefined>>;
  /** The cgroup path of the per-service cgroups. @default "/machined" */
  readonly serviceCgroupRoot?: string;
  /**
   * Components' own cgroups by owner, paths under /sys/fs/cgroup (`apid`:
   * `system/apid` on a node), so Cgroups shows the edge's memory and OOM
   * kills beside the services'.
   */
  readonly componentCgroups?: () => Readonly<Record<string, string>>;
  /** /sys/fs/cgroup, for Cgroups; without it Cgroups lists none. */
  readonly cgroups?: ProcBackend;
  /** statvfs of a mount point, for Mounts' size and use; without it they are unset. */
  readonly fsUsage?: FsUsageReader;
  /** Monotonic clock for samples. @default performance.now */
  readonly now?: () => number;
}

/** One process with its owner. */
export interface OwnedProcessInfo extends ProcessInfo {
  /** `machined`, `apid`, a service id, or `""`. */
  readonly owner: string;
}

/** The Memory report. */
export interface MemoryReport {
  readonly meminfo: MemInfo;
  /** Processes with an owner, by owner then pid. */
  readonly processes: readonly OwnedProcessInfo[];
  readonly owners: readonly {
    owner: string;
    processes: number;
    rssBytes: number;
    pssBytes: number;
  }[];
}

/** CPU times with the busy share since the previous sample. */
export interface CpuReport extends CpuTimes {
  readonly usagePercent?: number;
}

/** The Stats report. */
export interface StatsReport extends Omit<SystemStats, "stat"> {
  readonly cpuTotal: CpuReport;
  readonly cpus: readonly CpuReport[];
  readonly contextSwitches: number;
  readonly processesCreated: number;
  readonly processesRunning: number;
  readonly processesBlocked: number;
  /** The interval the usage shares cover; unset on the first call. */
  readonly sampleIntervalMs?: number;
}

/** A process with its CPU share since an earlier sample. */
export interface ProcessReport extends OwnedProcessInfo {
  /** 100 = one core; unset when the process was not in that sample. */
  readonly cpuPercent?: number;
}

/** A socket with the command and owner of its process. */
export interface SocketOwnerReport extends SocketReport {
  readonly command: string;
  readonly owner: string;
}

/** Reads and joins what the observability RPCs report. */
export class Observer {
  readonly #deps: ObserverDeps;
  readonly #cpu: Sampler<SystemStats["stat"]>;
  /** CPU seconds by `pid:start` (a reused pid is another process). */
  readonly #procCpu: Sampler<Map<string, number>>;

  constructor(deps: ObserverDeps) {
    this.#deps = deps;
    this.#cpu = new Sampler(1000, deps.now);
    this.#procCpu = new Sampler(1000, deps.now);
  }

  /** The /proc tree this observer reads. */
  get proc(): ProcBackend {
    return this.#deps.proc;
  }

  /** Every process now, each with its owner. @throws ProcError */
  async processes(options: { pss?: boolean } = {}): Promise<OwnedProcessInfo[]> {
    const all = await readProcesses(this.#deps.proc, options);
    const components = new Map<number, string>();
    for (const [name, pid] of Object.entries(this.#deps.components?.() ?? {})) {
      if (pid !== undefined) components.set(pid, name);
    }
    const owners = assignOwners(all, {
      components,
      services: this.#deps.services?.() ?? [],
      serviceCgroupRoot: this.#deps.serviceCgroupRoot,
    });
    return all.map((p) => ({ ...p, owner: owners.get(p.pid) ?? "" }));
  }

  /** Every process with its CPU share since an earlier call, by pid. @throws ProcError */
  async processReport(): Promise<{ processes: ProcessReport[]; sampleIntervalMs?: number }> {
    const all = await this.processes();
    const key = (p: ProcessInfo) => `${p.pid}:${p.startSeconds}`;
    const cpu = new Map(all.map((p) => [key(p), p.cpuSeconds]));
    const at = this.#now();
    const base = this.#procCpu.observe(cpu);
    const seconds = base ? (at - base.at) / 1000 : 0;
    const processes = all.map((p): ProcessReport => {
      const before = base?.value.get(key(p));
      if (before === undefined || seconds <= 0) return p;
      return { ...p, cpuPercent: Math.max(0, (100 * (p.cpuSeconds - before)) / seconds) };
    });
    return { processes, ...(base ? { sampleIntervalMs: at - base.at } : {}) };
  }

  /** Every mount with its use. @throws ProcError */
  mounts(): Promise<MountReport[]> {
    return readMounts(this.#deps.proc, this.#deps.fsUsage);
  }

  /** machined's cgroup and each service's, by owner. @throws ProcError */
  async cgroups(): Promise<CgroupReport[]> {
    if (!this.#deps.cgroups) return [];
    const ids = (this.#deps.services?.() ?? []).map((s) => s.id);
    const services = await readServiceCgroups(
      this.#deps.proc,
      this.#deps.cgroups,
      ids,
      this.#deps.serviceCgroupRoot ?? "/machined",
    );
    const components: CgroupReport[] = [];
    for (const [owner, path] of Object.entries(this.#deps.componentCgroups?.() ?? {})) {
      const stats = await readCgroupStats(this.#deps.cgroups, path.replace(/^\//, ""));
      if (stats) components.push({ ...stats, owner });
    }
    return [...services, ...components].sort((a, b) => a.owner.localeCompare(b.owner));
  }

  /** Every TCP/UDP socket with its process. @throws ProcError */
  async sockets(): Promise<SocketOwnerReport[]> {
    const [sockets, processes] = await Promise.all([
      readSocketReport(this.#deps.proc),
      this.processes({ pss: false }),
    ]);
    const byPid = new Map(processes.map((p) => [p.pid, p]));
    return sockets.map((s) => ({
      ...s,
      command: byPid.get(s.pid)?.comm ?? "",
      owner: byPid.get(s.pid)?.owner ?? "",
    }));
  }

  #now(): number {
    return (this.#deps.now ?? (() => performance.now()))();
  }

  /** meminfo and the memory of every owned process. @throws ProcError */
  async memory(): Promise<MemoryReport> {
    const [meminfo, all] = await Promise.all([readMeminfo(this.#deps.proc), this.processes()]);
    const processes = all.filter((p) => p.owner !== "").sort((a, b) =>
      a.owner.localeCompare(b.owner) || a.pid - b.pid
    );
    const sums = new Map<string, MemoryReport["owners"][number]>();
    for (const p of processes) {
      const s = sums.get(p.owner) ?? { owner: p.owner, processes: 0, rssBytes: 0, pssBytes: 0 };
      s.processes++;
      s.rssBytes += p.rssBytes;
      s.pssBytes += p.pssBytes ?? 0;
      sums.set(p.owner, s);
    }
    return { meminfo, processes, owners: [...sums.values()] };
  }

  /** System counters, with CPU usage since the previous sample. @throws ProcError */
  async stats(): Promise<StatsReport> {
    const { stat, ...rest } = await readSystemStats(this.#deps.proc);
    const at = this.#now();
    const base = this.#cpu.observe(stat);
    const withUsage = (now: CpuTimes, before: CpuTimes | undefined): CpuReport =>
      before ? { ...now, usagePercent: cpuUsagePercent(before, now) } : now;
    return {
      ...rest,
      cpuTotal: withUsage(stat.total, base?.value.total),
      cpus: stat.cpus.map((c) => withUsage(c, base?.value.cpus.find((b) => b.cpu === c.cpu))),
      contextSwitches: stat.contextSwitches,
      processesCreated: stat.processesCreated,
      processesRunning: stat.processesRunning,
      processesBlocked: stat.processesBlocked,
      ...(base ? { sampleIntervalMs: at - base.at } : {}),
    };
  }
}
