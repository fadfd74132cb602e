/**
 * `machinectl memory`: the node's /proc/meminfo, then the RSS and PSS of
 * machined, apid, containerd and every service, per owner and per process.
 */
import type { MemoryResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import type { Command } from "../command.ts";
import { alignTable } from "../output.ts";
import { snapshotCommand } from "./observe_command.ts";
import { formatBytes } from "./observe_format.ts";

export const memoryCommand: Command = snapshotCommand({
  name: "memory",
  aliases: ["mem", "free"],
  summary: "Show memory: /proc/meminfo and RSS/PSS of machined, apid and every service",
  fetch: (client, options) => client.memory({}, options),
  table: (r) => formatMemory(r),
});

/** The three tables of `memory`. */
export function formatMemory(r: MemoryResponse): string {
  const m = r.meminfo;
  const system = alignTable([
    ["TOTAL", "USED", "FREE", "AVAILABLE", "BUFFERS", "CACHED", "SHMEM", "SWAP", "SWAP FREE"],
    [
      formatBytes(m?.totalBytes),
      formatBytes(m ? m.totalBytes - m.availableBytes : undefined),
      formatBytes(m?.freeBytes),
      formatBytes(m?.availableBytes),
      formatBytes(m?.buffersBytes),
      formatBytes(m?.cachedBytes),
      formatBytes(m?.shmemBytes),
      formatBytes(m?.swapTotalBytes),
      formatBytes(m?.swapFreeBytes),
    ],
  ]);
  const owners = alignTable([
    ["OWNER", "PROCESSES", "RSS", "PSS"],
    ...r.owners.map((o) => [
      o.owner,
      String(o.processes),
      formatBytes(o.rssBytes),
      formatBytes(o.pssBytes),
    ]),
  ]);
  const processes = alignTable([
    ["PID", "OWNER", "COMMAND", "RSS", "PSS"],
    ...r.processes.map((p) => [
      String(p.pid),
      p.owner,
      p.command,
      formatBytes(p.rssBytes),
      formatBytes(p.pssBytes),
    ]),
  ]);
  return [system, owners, processes].join("\n\n");
}
