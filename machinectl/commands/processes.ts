/**
 * `machinectl ps`: every process with its owner (machined, apid, a service),
 * CPU share, memory and command line; `--sort` orders it, `--watch` redraws
 * it on an interval until Ctrl-C.
 */
import type { Process, ProcessesResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { untilInterrupted } from "./follow.ts";
import {
  clip,
  formatBytes,
  formatDocument,
  formatPercent,
  formatSeconds,
  noArgs,
  OUTPUT_FLAG,
} from "./observe_format.ts";

/** `--sort` keys: numeric ones sort largest first, pid and name ascending. */
const SORTS: Record<string, (a: Process, b: Process) => number> = {
  pid: (a, b) => a.pid - b.pid,
  name: (a, b) => a.command.localeCompare(b.command) || a.pid - b.pid,
  owner: (a, b) => a.owner.localeCompare(b.owner) || a.pid - b.pid,
  cpu: (a, b) => (b.cpuPercent ?? -1) - (a.cpuPercent ?? -1) || a.pid - b.pid,
  time: (a, b) => b.cpuSeconds - a.cpuSeconds || a.pid - b.pid,
  rss: (a, b) => Number(b.rssBytes - a.rssBytes) || a.pid - b.pid,
  pss: (a, b) => Number((b.pssBytes ?? -1n) - (a.pssBytes ?? -1n)) || a.pid - b.pid,
  threads: (a, b) => b.threads - a.threads || a.pid - b.pid,
};

export const processesCommand = defineCommand({
  name: "ps",
  aliases: ["processes"],
  summary: "List processes: owner, state, CPU, RSS/PSS, command line",
  connects: true,
  flags: {
    ...OUTPUT_FLAG,
    sort: {
      kind: "enum",
      short: "s",
      values: Object.keys(SORTS),
      default: "pid",
      noun: "sort",
      help: "the column to order by",
    },
    watch: { kind: "boolean", short: "w", help: "redraw every --interval until Ctrl-C" },
    interval: {
      kind: "number",
      default: 2,
      value: "S",
      help: "seconds between --watch frames",
    },
  },
  async run({ flags, args, io, signal: outer }) {
    noArgs("ps", args);
    const format = flags.output;
    const sort = SORTS[flags.sort];
    const intervalMs = flags.interval * 1000;
    if (!(intervalMs >= 100)) {
      throw new CliError(`ps: --interval wants seconds ≥ 0.1, got "${flags.interval}"`, 2);
    }
    using conn = await connectToNode(flags);
    const fetch = () => conn.client.processes({}, { timeoutMs: 15_000 });
    const render = (r: ProcessesResponse) =>
      format === "table"
        ? formatProcesses([...r.processes].sort(sort))
        : formatDocument({ ...r, processes: [...r.processes].sort(sort) }, format);
    let r = await fetch();
    if (r.sampleIntervalMs === undefined && !flags.watch) {
      // The node's first sample: take a second one so CPU% means something.
      await sleep(1000, outer);
      r = await fetch();
    }
    if (!flags.watch) {
      io.out(render(r));
      return 0;
    }
    await untilInterrupted(async (signal) => {
      for (;;) {
        const frame = render(r) + (format === "yaml" ? "\n---" : "");
        // A table redraws the screen (io.redraw: the one control sequence machinectl sends).
        if (format === "table" && io.redraw) io.redraw(frame);
        else io.out(frame);
        await sleep(intervalMs, signal);
        if (signal.aborted) return;
        r = await fetch();
      }
    }, outer);
    return 0;
  },
});

/** The `ps` table. */
export function formatProcesses(processes: readonly Process[]): string {
  return alignTable([
    ["PID", "PPID", "OWNER", "STATE", "THREADS", "CPU%", "TIME", "RSS", "PSS", "COMMAND"],
    ...processes.map((p) => [
      String(p.pid),
      String(p.ppid),
      p.owner || "-",
      p.state,
      String(p.threads),
      formatPercent(p.cpuPercent),
      formatSeconds(p.cpuSeconds),
      formatBytes(p.rssBytes),
      formatBytes(p.pssBytes),
      clip(p.args.length > 0 ? p.args.join(" ") : `[${p.command}]`),
    ]),
  ]);
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
