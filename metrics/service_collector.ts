/**
 * Per-service metrics: state, health and restarts from the supervisor, and
 * cgroup usage (memory, CPU, pids) from each service's own cgroup (read
 * through platform/procfs's reader rooted at the service cgroup directory;
 * dev mode has no service cgroups, so only the state families appear).
 */
import { isProcGone, type ProcBackend } from "../platform/procfs/mod.ts";
import type { ServiceState, ServiceStatusSpec } from "../resources/mod.ts";
import type { Collector, MetricFamily } from "./registry.ts";

/** Every state a service can be in, so each series is present (0 or 1). */
export const SERVICE_STATES: readonly ServiceState[] = [
  "waiting",
  "starting",
  "running",
  "stopping",
  "finished",
  "failed",
  "backing-off",
];

/**
 * One service's usage from its cgroup. `cpu.stat` is always there (cgroup v2
 * core); `memory.current` and `pids.current` only where the memory and pids
 * controllers are enabled for the service cgroups (the supervisor enables
 * them when a service sets a limit), so they may be absent.
 */
export interface CgroupUsage {
  readonly cpuSeconds: number;
  readonly memoryBytes?: number;
  readonly pids?: number;
}

/** Options of {@link serviceCollector}. */
export interface ServiceSources {
  readonly services: () => readonly { id: string; status: ServiceStatusSpec }[];
  /** The service cgroup directory (`/sys/fs/cgroup/machined`); none in dev mode. */
  readonly cgroups?: ProcBackend;
}

/** A collector of every service's state, restarts and cgroup usage. */
export function serviceCollector(sources: ServiceSources): Collector {
  return async () => {
    const services = sources.services();
    const usage = new Map<string, CgroupUsage>();
    if (sources.cgroups) {
      for (const s of services) {
        const u = await readCgroupUsage(sources.cgroups, s.id);
        if (u) usage.set(s.id, u);
      }
    }
    return serviceFamilies(services, usage);
  };
}

/**
 * A cgroup's cpu.stat usage_usec, memory.current and pids.current (each
 * when present); undefined when the cgroup does not exist (a service not
 * started yet).
 * @throws ProcError for a read failure other than a missing file
 */
export async function readCgroupUsage(
  cgroups: ProcBackend,
  id: string,
): Promise<CgroupUsage | undefined> {
  const read = (file: string) =>
    cgroups.readText(`${id}/${file}`).catch((e) => {
      if (isProcGone(e)) return undefined;
      throw e;
    });
  const [cpu, memory, pids] = await Promise.all([
    read("cpu.stat"),
    read("memory.current"),
    read("pids.current"),
  ]);
  if (cpu === undefined) return undefined;
  const usec = Number(/^usage_usec (\d+)$/m.exec(cpu)?.[1] ?? 0);
  return {
    cpuSeconds: usec / 1e6,
    ...(memory !== undefined ? { memoryBytes: Number(memory.trim()) } : {}),
    ...(pids !== undefined ? { pids: Number(pids.trim()) } : {}),
  };
}

/** Services and their usage → families. Pure. */
export function serviceFamilies(
  services: readonly { id: string; status: ServiceStatusSpec }[],
  usage: ReadonlyMap<string, CgroupUsage>,
): MetricFamily[] {
  const per = (f: (s: ServiceStatusSpec) => number) =>
    services.map((s) => ({ labels: { service: s.id }, value: f(s.status) }));
  const used = (f: (u: CgroupUsage) => number | undefined) =>
    services.flatMap((s) => {
      const u = usage.get(s.id);
      const value = u ? f(u) : undefined;
      return value !== undefined ? [{ labels: { service: s.id }, value }] : [];
    });
  return [
    {
      name: "machined_service_state",
      help: "1 for the state each service is in, 0 for the others",
      type: "gauge",
      samples: services.flatMap((s) =>
        SERVICE_STATES.map((state) => ({
          labels: { service: s.id, state },
          value: s.status.state === state ? 1 : 0,
        }))
      ),
    },
    {
      name: "machined_service_healthy",
      help: "1 while the service is ready for its dependents",
      type: "gauge",
      samples: per((s) => (s.healthy ? 1 : 0)),
    },
    {
      name: "machined_service_restarts",
      help: "Restarts since the service was (re)configured or started on request",
      type: "gauge",
      samples: per((s) => s.restarts),
    },
    {
      name: "machined_service_memory_bytes",
      help: "memory.current of the service's cgroup (where the memory controller is enabled)",
      type: "gauge",
      samples: used((u) => u.memoryBytes),
    },
    {
      name: "machined_service_cpu_seconds_total",
      help: "CPU time of the service's cgroup (cpu.stat usage_usec)",
      type: "counter",
      samples: used((u) => u.cpuSeconds),
    },
    {
      name: "machined_service_pids",
      help: "pids.current of the service's cgroup (where the pids controller is enabled)",
      type: "gauge",
      samples: used((u) => u.pids),
    },
  ];
}
