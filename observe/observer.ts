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
  readMeminfo,
  readProcesses,
  readSystemStats,
  type SystemStats,
} from "../platform/procfs/mod.ts";
import { assignOwners } from "./owners.ts";
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

/** Reads and joins what the observability RPCs report. */
export class Observer {
  readonly #deps: ObserverDeps;
  readonly #cpu: Sampler<SystemStats["stat"]>;

  constructor(deps: ObserverDeps) {
    this.#deps = deps;
    this.#cpu = new Sampler(1000, deps.now);
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
    const base = this.#cpu.observe(stat);
    const at = (this.#deps.now ?? (() => performance.now()))();
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
