/**
 * `machinectl stats`: load average, CPU per core (busy share since the node's
 * previous sample), disk I/O per device and network counters per link.
 */
import type { CpuTimes, StatsResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { alignTable } from "../output.ts";
import {
  formatBytes,
  formatDocument,
  formatPercent,
  formatSeconds,
  noArgs,
  OUTPUT_FLAG,
} from "./observe_format.ts";

export const statsCommand = defineCommand({
  name: "stats",
  summary: "Show load, CPU per core, disk I/O per device and network counters per link",
  connects: true,
  flags: OUTPUT_FLAG,
  async run({ flags, args, io }) {
    noArgs("stats", args);
    const format = flags.output;
    using conn = await connectToNode(flags);
    let r = await conn.client.stats({}, { timeoutMs: 15_000 });
    if (r.sampleIntervalMs === undefined) {
      // The node's first sample: take a second one so USAGE% means something.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      r = await conn.client.stats({}, { timeoutMs: 15_000 });
    }
    io.out(format === "table" ? formatStats(r) : formatDocument(r, format));
    return 0;
  },
});

/** The summary line and the CPU, disk and link tables. */
export function formatStats(r: StatsResponse): string {
  const l = r.load;
  const summary = `load average: ${l?.load1.toFixed(2)} ${l?.load5.toFixed(2)} ` +
    `${l?.load15.toFixed(2)}   tasks: ${l?.running}/${l?.total}   uptime: ` +
    `${formatSeconds(r.uptimeSeconds)}   procs running: ${r.processesRunning}, ` +
    `blocked: ${r.processesBlocked}`;
  const cpuRow = (c: CpuTimes) => [
    c.cpu,
    formatPercent(c.usagePercent),
    formatSeconds(c.user + c.nice),
    formatSeconds(c.system + c.irq + c.softirq),
    formatSeconds(c.idle),
    formatSeconds(c.iowait),
    formatSeconds(c.steal),
  ];
  const cpus = alignTable([
    ["CPU", "USAGE%", "USER", "SYSTEM", "IDLE", "IOWAIT", "STEAL"],
    ...(r.cpuTotal ? [cpuRow(r.cpuTotal)] : []),
    ...r.cpus.map(cpuRow),
  ]);
  const disks = alignTable([
    ["DEVICE", "READS", "READ", "WRITES", "WRITTEN", "IN FLIGHT", "IO TIME"],
    ...r.disks.map((d) => [
      d.device,
      String(d.reads),
      formatBytes(d.readBytes),
      String(d.writes),
      formatBytes(d.writtenBytes),
      String(d.inFlight),
      formatSeconds(Number(d.ioMs) / 1000),
    ]),
  ]);
  const links = alignTable([
    [
      "LINK",
      "RX",
      "RX PACKETS",
      "RX ERRORS",
      "RX DROPPED",
      "TX",
      "TX PACKETS",
      "TX ERRORS",
      "TX DROPPED",
    ],
    ...r.links.map((n) => [
      n.link,
      formatBytes(n.rxBytes),
      String(n.rxPackets),
      String(n.rxErrors),
      String(n.rxDropped),
      formatBytes(n.txBytes),
      String(n.txPackets),
      String(n.txErrors),
      String(n.txDropped),
    ]),
  ]);
  return [summary, cpus, disks, links].join("\n\n");
}
