/**
 * Prometheus metrics for machined: a registry of counters, gauges and
 * histograms plus scrape-time collectors, rendered as text exposition 0.0.4
 * (served by apid as `GET /metrics`).
 *
 * @example
 * ```ts
 * import { MetricsRegistry } from "./metrics/mod.ts";
 * const registry = new MetricsRegistry();
 * registry.counter("machined_api_requests_total", "API calls").inc({ method: "Version", code: "ok" });
 * const text = await registry.render();
 * ```
 * @module
 */
export {
  type Collector,
  Counter,
  DEFAULT_BUCKETS,
  Gauge,
  Histogram,
  type Labels,
  type MetricFamily,
  MetricsRegistry,
  sample,
} from "./registry.ts";
export { memoryFamilies, nodeCollector, systemFamilies } from "./node_collector.ts";
export {
  controllerCycleObserver,
  controllerFamilies,
  machinedCollector,
  type MachinedSources,
  ueventFamily,
  type UeventTotals,
} from "./controller_collector.ts";
export {
  type CgroupUsage,
  readCgroupUsage,
  SERVICE_STATES,
  serviceCollector,
  serviceFamilies,
  type ServiceSources,
} from "./service_collector.ts";
