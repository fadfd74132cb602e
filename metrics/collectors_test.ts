import { deepEqual, equal, ok } from "node:assert/strict";
import { FakeProcBackend } from "../platform/procfs/mod.ts";
import { seededProc } from "../observe/testing.ts";
import {
  controllerCycleObserver,
  machinedCollector,
  MetricsRegistry,
  nodeCollector,
  readCgroupUsage,
  serviceCollector,
  ueventFamily,
} from "./mod.ts";
import type { ServiceStatusSpec } from "../resources/mod.ts";

Deno.test("node collector: memory, CPU, load, disk and network from /proc", async () => {
  const r = new MetricsRegistry();
  r.collect(nodeCollector(seededProc()));
  const text = await r.render();
  for (
    const line of [
      "machined_node_memory_total_bytes 2048000000",
      "machined_node_memory_available_bytes 1536000000",
      'machined_node_cpu_seconds_total{cpu="cpu0",mode="user"} 5',
      "machined_node_load1 0.5",
      'machined_node_disk_read_bytes_total{device="vda"} 1048576',
      'machined_node_network_receive_bytes_total{device="eth0"} 500000',
      'machined_node_network_transmit_drop_total{device="eth0"} 1',
      "machined_node_context_switches_total 123456",
      "machined_metrics_collector_errors 0",
    ]
  ) ok(text.includes(line + "\n"), `${line}\n---\n${text}`);
});

Deno.test("a /proc that cannot be read is a counted collector error, not a failed scrape", async () => {
  const r = new MetricsRegistry();
  r.collect(nodeCollector(new FakeProcBackend()));
  r.collect(() => [{ name: "x", help: "h", type: "gauge", samples: [{ value: 1 }] }]);
  const text = await r.render();
  ok(text.includes("x 1\n"));
  ok(text.includes("machined_metrics_collector_errors 1\n"));
});

const status = (state: ServiceStatusSpec["state"], restarts: number): ServiceStatusSpec => ({
  state,
  healthy: state === "running",
  restarts,
  pid: null,
  lastExit: null,
  message: "",
  since: 0,
  logFileError: "",
  sandbox: null,
});

Deno.test("service collector: one-hot state, health, restarts and cgroup usage", async () => {
  const cgroups = new FakeProcBackend("/sys/fs/cgroup/machined")
    .setFile("containerd/memory.current", "52428800\n")
    .setFile("containerd/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n")
    .setFile("containerd/pids.current", "12\n");
  deepEqual(await readCgroupUsage(cgroups, "payload"), undefined, "no cgroup yet");
  // Without the memory and pids controllers, only cpu.stat is there.
  cgroups.setFile("hello/cpu.stat", "usage_usec 1000\n");
  deepEqual(await readCgroupUsage(cgroups, "hello"), { cpuSeconds: 0.001 });
  const r = new MetricsRegistry();
  r.collect(serviceCollector({
    services: () => [
      { id: "containerd", status: status("running", 0) },
      { id: "payload", status: status("backing-off", 3) },
    ],
    cgroups,
  }));
  const text = await r.render();
  for (
    const line of [
      'machined_service_state{service="containerd",state="running"} 1',
      'machined_service_state{service="containerd",state="failed"} 0',
      'machined_service_state{service="payload",state="backing-off"} 1',
      'machined_service_healthy{service="containerd"} 1',
      'machined_service_restarts{service="payload"} 3',
      'machined_service_memory_bytes{service="containerd"} 52428800',
      'machined_service_cpu_seconds_total{service="containerd"} 2.5',
      'machined_service_pids{service="containerd"} 12',
    ]
  ) ok(text.includes(line + "\n"), `${line}\n---\n${text}`);
  ok(!text.includes('machined_service_memory_bytes{service="payload"}'));
});

Deno.test("controller metrics: counters from stats, a duration per finished cycle", async () => {
  const r = new MetricsRegistry();
  const observe = controllerCycleObserver(r);
  const base = { name: "net.A", state: "idle" as const, failures: 0, consecutiveFailures: 0 };
  observe({ ...base, reconciles: 0 });
  observe({ ...base, reconciles: 1, lastDurationMs: 2 });
  observe({ ...base, reconciles: 1, lastDurationMs: 2, state: "running" }); // no new cycle
  observe({ ...base, reconciles: 2, failures: 1, consecutiveFailures: 1, lastDurationMs: 40 });
  r.collect(machinedCollector({
    controllers:
      () => [{ ...base, reconciles: 2, failures: 1, state: "backoff", watchFailures: 3 }],
    watches: () => 4,
  }));
  r.collect(() => [ueventFamily({ received: 10, dropped: 2, rejected: 1, foreign: 0 })]);
  const text = await r.render();
  ok(text.includes('machined_controller_reconcile_duration_seconds_count{controller="net.A"} 2\n'));
  ok(
    text.includes('machined_controller_reconcile_duration_seconds_sum{controller="net.A"} 0.042\n'),
  );
  ok(text.includes('machined_controller_reconciles_total{controller="net.A"} 2\n'));
  ok(text.includes('machined_controller_failures_total{controller="net.A"} 1\n'));
  ok(text.includes('machined_controller_backing_off{controller="net.A"} 1\n'));
  ok(text.includes("machined_store_watches_open 4\n"));
  ok(text.includes('machined_controller_watch_failures_total{controller="net.A"} 3\n'));
  ok(text.includes('machined_uevents_total{outcome="received"} 10\n'));
  ok(text.includes('machined_uevents_total{outcome="dropped"} 2\n'));
  ok(text.includes('machined_uevents_total{outcome="rejected"} 1\n'));
  equal(/machined_process_resident_memory_bytes (\d+)/.exec(text) !== null, true);
});

Deno.test("machined's malloc heap and V8's external memory are exported when given", async () => {
  const r = new MetricsRegistry();
  r.collect(machinedCollector({
    controllers: () => [],
    watches: () => 0,
    malloc: () => ({ inUse: 20 << 20, free: 3 << 20, arena: 24 << 20 }),
  }));
  const text = await r.render();
  ok(text.includes(`machined_malloc_in_use_bytes ${20 << 20}\n`));
  ok(text.includes(`machined_malloc_free_bytes ${3 << 20}\n`));
  ok(text.includes(`machined_malloc_arena_bytes ${24 << 20}\n`));
  ok(/machined_process_external_bytes \d+\n/.test(text));
  const none = new MetricsRegistry();
  none.collect(machinedCollector({ controllers: () => [], watches: () => 0 }));
  ok(!(await none.render()).includes("machined_malloc_"));
});
