/**
 * Node metrics: memory, CPU, load, disk and network, read at scrape time from
 * /proc through platform/procfs's reader (the same one the Memory and Stats
 * RPCs use). Names follow node_exporter's where one exists, under
 * `machined_node_`.
 */
import {
  type MemInfo,
  type ProcBackend,
  readMeminfo,
  readSystemStats,
  type SystemStats,
} from "../platform/procfs/mod.ts";
import type { Collector, MetricFamily } from "./registry.ts";

/** A collector reading `proc` at every scrape. @throws ProcError from the scrape (counted) */
export function nodeCollector(proc: ProcBackend): Collector {
  return async () => {
    const [mem, stats] = await Promise.all([readMeminfo(proc), readSystemStats(proc)]);
    return [...memoryFamilies(mem), ...systemFamilies(stats)];
  };
}

const gauge = (name: string, help: string, value: number): MetricFamily => ({
  name,
  help,
  type: "gauge",
  samples: [{ value }],
});

/** /proc/meminfo → `machined_node_memory_*_bytes`. Pure. */
export function memoryFamilies(m: MemInfo): MetricFamily[] {
  const n = (what: string) => `machined_node_memory_${what}_bytes`;
  return [
    gauge(n("total"), "MemTotal", m.totalBytes),
    gauge(n("available"), "MemAvailable: memory available without swapping", m.availableBytes),
    gauge(n("free"), "MemFree", m.freeBytes),
    gauge(n("buffers"), "Buffers", m.buffersBytes),
    gauge(n("cached"), "Cached (page cache)", m.cachedBytes),
    gauge(n("shmem"), "Shmem", m.shmemBytes),
    gauge(n("swap_total"), "SwapTotal", m.swapTotalBytes),
    gauge(n("swap_free"), "SwapFree", m.swapFreeBytes),
  ];
}

const CPU_MODES = [
  "user",
  "nice",
  "system",
  "idle",
  "iowait",
  "irq",
  "softirq",
  "steal",
] as const;

/** /proc/stat, loadavg, uptime, diskstats and net/dev → families. Pure. */
export function systemFamilies(s: SystemStats): MetricFamily[] {
  const counter = (
    name: string,
    help: string,
    samples: MetricFamily["samples"],
  ): MetricFamily => ({ name, help, type: "counter", samples });
  return [
    counter(
      "machined_node_cpu_seconds_total",
      "Seconds each CPU spent in each mode",
      s.stat.cpus.flatMap((c) =>
        CPU_MODES.map((mode) => ({ labels: { cpu: c.cpu, mode }, value: c[mode] }))
      ),
    ),
    gauge("machined_node_load1", "1-minute load average", s.load.load1),
    gauge("machined_node_load5", "5-minute load average", s.load.load5),
    gauge("machined_node_load15", "15-minute load average", s.load.load15),
    gauge("machined_node_uptime_seconds", "Seconds since boot", s.uptimeSeconds),
    gauge("machined_node_procs_running", "Runnable tasks", s.stat.processesRunning),
    gauge("machined_node_procs_blocked", "Tasks blocked on I/O", s.stat.processesBlocked),
    counter("machined_node_context_switches_total", "Context switches", [
      { value: s.stat.contextSwitches },
    ]),
    counter("machined_node_forks_total", "Processes created", [{ value: s.stat.processesCreated }]),
    ...disk(s, counter),
    ...network(s, counter),
  ];
}

type CounterOf = (name: string, help: string, samples: MetricFamily["samples"]) => MetricFamily;

function disk(s: SystemStats, counter: CounterOf): MetricFamily[] {
  const per = (f: (d: SystemStats["disks"][number]) => number) =>
    s.disks.map((d) => ({ labels: { device: d.device }, value: f(d) }));
  const n = (what: string) => `machined_node_disk_${what}`;
  return [
    counter(n("reads_completed_total"), "Reads completed", per((d) => d.reads)),
    counter(n("read_bytes_total"), "Bytes read", per((d) => d.readBytes)),
    counter(n("writes_completed_total"), "Writes completed", per((d) => d.writes)),
    counter(n("written_bytes_total"), "Bytes written", per((d) => d.writtenBytes)),
    counter(n("io_time_seconds_total"), "Seconds spent doing I/O", per((d) => d.ioMs / 1000)),
    { name: n("io_now"), help: "I/Os in progress", type: "gauge", samples: per((d) => d.inFlight) },
  ];
}

function network(s: SystemStats, counter: CounterOf): MetricFamily[] {
  const per = (f: (l: SystemStats["links"][number]) => number) =>
    s.links.map((l) => ({ labels: { device: l.link }, value: f(l) }));
  const n = (what: string) => `machined_node_network_${what}_total`;
  return [
    counter(n("receive_bytes"), "Bytes received", per((l) => l.rxBytes)),
    counter(n("receive_packets"), "Packets received", per((l) => l.rxPackets)),
    counter(n("receive_errs"), "Receive errors", per((l) => l.rxErrors)),
    counter(n("receive_drop"), "Received packets dropped", per((l) => l.rxDropped)),
    counter(n("transmit_bytes"), "Bytes sent", per((l) => l.txBytes)),
    counter(n("transmit_packets"), "Packets sent", per((l) => l.txPackets)),
    counter(n("transmit_errs"), "Transmit errors", per((l) => l.txErrors)),
    counter(n("transmit_drop"), "Sent packets dropped", per((l) => l.txDropped)),
  ];
}
