/**
 * machined's own metrics: each controller's reconciles, failures and cycle
 * durations (from the runtime's ControllerStats), the store's open watches,
 * and machined's process memory.
 */
import type { ControllerStats } from "../runtime/mod.ts";
import type { Collector, MetricFamily } from "./registry.ts";
import type { MetricsRegistry } from "./registry.ts";

/** Seconds buckets for reconcile cycles: 0.1 ms to 30 s. */
const CYCLE_BUCKETS = [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30];

/**
 * Returns the `onStats` observer that records each finished cycle's duration
 * in `machined_controller_reconcile_duration_seconds`: the runtime publishes
 * stats after every cycle, and a cycle finished when `reconciles` grew.
 */
export function controllerCycleObserver(registry: MetricsRegistry): (s: ControllerStats) => void {
  const seconds = registry.histogram(
    "machined_controller_reconcile_duration_seconds",
    "Duration of each controller's reconcile cycles",
    CYCLE_BUCKETS,
  );
  const seen = new Map<string, number>();
  return (s) => {
    const before = seen.get(s.name) ?? 0;
    seen.set(s.name, s.reconciles);
    if (s.reconciles > before && s.lastDurationMs !== undefined) {
      seconds.observe({ controller: s.name }, s.lastDurationMs / 1000);
    }
  };
}

/** What the machined collector reads. */
export interface MachinedSources {
  readonly controllers: () => readonly ControllerStats[];
  /** The store's open watches (controllers' and API streams'). */
  readonly watches: () => number;
  /** glibc's heap (mallinfo2), when machined can read it. */
  readonly malloc?: () => { inUse: number; free: number; arena: number };
}

/** What the uevent family reads (platform/uevent's CountingUeventBackend gives it). */
export interface UeventTotals {
  readonly received: number;
  readonly dropped: number;
  readonly rejected: number;
  readonly foreign: number;
}

/** A collector of controller counters, open watches and process memory. */
export function machinedCollector(sources: MachinedSources): Collector {
  return () => [
    ...controllerFamilies(sources.controllers()),
    {
      name: "machined_store_watches_open",
      help: "Store watches open now (API Watch streams included)",
      type: "gauge",
      samples: [{ value: sources.watches() }],
    },
    ...processFamilies(Deno.memoryUsage()),
    ...(sources.malloc ? mallocFamilies(sources.malloc()) : []),
  ];
}

/**
 * glibc's heap in machined: in use, and free but kept by the arenas (what
 * boot/malloc_trim.ts hands back). Tells a native leak (in use grows) from
 * memory glibc keeps (free grows). Pure.
 */
export function mallocFamilies(h: { inUse: number; free: number; arena: number }): MetricFamily[] {
  const gauge = (name: string, help: string, value: number): MetricFamily => ({
    name,
    help,
    type: "gauge",
    samples: [{ value }],
  });
  return [
    gauge("machined_malloc_in_use_bytes", "Bytes machined's malloc heap has in use", h.inUse),
    gauge("machined_malloc_free_bytes", "Free bytes machined's malloc arenas keep", h.free),
    gauge(
      "machined_malloc_arena_bytes",
      "Bytes machined's malloc arenas hold (not mmapped)",
      h.arena,
    ),
  ];
}

/**
 * Kernel uevents by outcome: `received` (queued for the disk watch), `dropped`
 * (queue full or socket overrun: each forces a full rescan), `rejected` (a
 * kernel message the parser refused) and `foreign` (not from the kernel,
 * ignored). Pure.
 */
export function ueventFamily(t: UeventTotals): MetricFamily {
  const outcomes = ["received", "dropped", "rejected", "foreign"] as const;
  return {
    name: "machined_uevents_total",
    help: "Kernel uevents by outcome (dropped and rejected force a rescan)",
    type: "counter",
    samples: outcomes.map((outcome) => ({ labels: { outcome }, value: t[outcome] })),
  };
}

/** ControllerStats → families. Pure. */
export function controllerFamilies(stats: readonly ControllerStats[]): MetricFamily[] {
  const per = (f: (s: ControllerStats) => number) =>
    stats.map((s) => ({ labels: { controller: s.name }, value: f(s) }));
  return [
    {
      name: "machined_controller_reconciles_total",
      help: "Reconcile cycles finished, by controller",
      type: "counter",
      samples: per((s) => s.reconciles),
    },
    {
      name: "machined_controller_failures_total",
      help: "Reconcile cycles that failed, by controller",
      type: "counter",
      samples: per((s) => s.failures),
    },
    {
      name: "machined_controller_consecutive_failures",
      help: "Failures since the controller's last successful cycle",
      type: "gauge",
      samples: per((s) => s.consecutiveFailures),
    },
    {
      name: "machined_controller_watch_failures_total",
      help: "Times a controller's event stream (uevents, rtnetlink) failed and was restarted",
      type: "counter",
      samples: per((s) => s.watchFailures ?? 0),
    },
    {
      name: "machined_controller_backing_off",
      help: "1 while the controller waits to retry after a failure",
      type: "gauge",
      samples: per((s) => (s.state === "backoff" ? 1 : 0)),
    },
  ];
}

function processFamilies(m: Deno.MemoryUsage): MetricFamily[] {
  return [
    {
      name: "machined_process_resident_memory_bytes",
      help: "machined's resident set size",
      type: "gauge",
      samples: [{ value: m.rss }],
    },
    {
      name: "machined_process_heap_used_bytes",
      help: "machined's V8 heap in use",
      type: "gauge",
      samples: [{ value: m.heapUsed }],
    },
    {
      name: "machined_process_external_bytes",
      help: "Memory outside V8's heap that its objects hold (ArrayBuffer backing stores: malloc)",
      type: "gauge",
      samples: [{ value: m.external }],
    },
  ];
}
