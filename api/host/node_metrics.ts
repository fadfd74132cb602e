/**
 * The composition of a node's metrics registry: node (/proc), machined's own
 * (controllers, watches, process; API calls are counted by the internal
 * server's interceptor into the same registry) and per-service families.
 * machined answers `GET /metrics` (api/server/metrics_route.ts); machined-edge
 * forwards the scrape and appends its own counters.
 */
import {
  machinedCollector,
  MetricsRegistry,
  nodeCollector,
  serviceCollector,
} from "../../metrics/mod.ts";
import { NativeProcBackend, type ProcBackend } from "../../platform/procfs/mod.ts";
import type { ServiceControl } from "../server/mod.ts";
import type { Machined } from "../../core/mod.ts";
import type { MallocBackend } from "../../platform/memory/mod.ts";

/** Options of {@link createNodeMetrics}. */
export interface NodeMetricsOptions {
  /** /proc. @default the host's (read-only) */
  readonly proc?: ProcBackend;
  /** The supervisor, for per-service families. */
  readonly services?: Pick<ServiceControl, "list">;
  /** The per-service cgroup directory, when services have cgroups (a node). */
  readonly serviceCgroups?: string;
  /** machined's malloc heap: the `machined_malloc_*` families when given. */
  readonly malloc?: MallocBackend;
}

/** Adds the node, machined and service collectors to machined's registry and returns it. */
export function createNodeMetrics(m: Machined, o: NodeMetricsOptions = {}): MetricsRegistry {
  const registry = m.metrics;
  registry.collect(nodeCollector(o.proc ?? new NativeProcBackend()));
  registry.collect(machinedCollector({
    controllers: () => m.runtime.stats(),
    watches: () => m.store.watchCount,
    malloc: o.malloc && (() => o.malloc!.heap()),
  }));
  const services = o.services;
  if (services) {
    registry.collect(serviceCollector({
      services: () => services.list(),
      cgroups: o.serviceCgroups ? new NativeProcBackend(o.serviceCgroups) : undefined,
    }));
  }
  return registry;
}

export { MetricsRegistry };
