/**
 * `machinectl cgroups`: machined's cgroup and each service's (the payload's,
 * containerd's): memory use and limit, OOM kills, CPU time, throttling, pids.
 */
import type { CgroupsResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { alignTable } from "../output.ts";
import {
  formatBytes,
  formatDocument,
  formatSeconds,
  noArgs,
  OUTPUT_FLAG,
} from "./observe_format.ts";

export const cgroupsCommand = defineCommand({
  name: "cgroups",
  aliases: ["cgroup"],
  summary: "Show each service's cgroup: memory, OOM kills, CPU, pids",
  connects: true,
  flags: OUTPUT_FLAG,
  async run({ flags, args, io }) {
    noArgs("cgroups", args);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const r = await conn.client.cgroups({}, { timeoutMs: 15_000 });
    if (format !== "table") io.out(formatDocument(r, format));
    else if (r.cgroups.length === 0) io.err("no cgroups (this machined runs without them)");
    else io.out(formatCgroups(r));
    return 0;
  },
});

/** The cgroups table. */
export function formatCgroups(r: CgroupsResponse): string {
  return alignTable([
    ["OWNER", "PATH", "MEMORY", "MEMORY MAX", "OOM KILLS", "CPU", "THROTTLED", "PIDS", "PIDS MAX"],
    ...r.cgroups.map((c) => [
      c.owner,
      `/${c.path}`,
      formatBytes(c.memoryCurrentBytes),
      c.memoryMaxBytes === undefined ? "max" : formatBytes(c.memoryMaxBytes),
      String(c.memoryEvents.oom_kill ?? 0),
      formatSeconds(Number(c.cpuStat.usage_usec ?? 0n) / 1e6),
      String(c.cpuStat.nr_throttled ?? 0),
      String(c.pidsCurrent),
      c.pidsMax === undefined ? "max" : String(c.pidsMax),
    ]),
  ]);
}
