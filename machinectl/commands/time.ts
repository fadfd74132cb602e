/**
 * `machinectl time [SERVER]`: the node's SNTP status and, given a server
 * (`host`, `[v6]`; the port is always 123), the clock's offset from it measured now by
 * the node. A reader may name only the node's configured servers (docs/api.md, Roles).
 */
import type { TimeResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { alignTable } from "../output.ts";
import { formatDocument, OUTPUT_FLAG } from "./observe_format.ts";

export const timeCommand = defineCommand({
  name: "time",
  args: "[SERVER]",
  summary: "Show the SNTP status; with SERVER, the clock's offset from it now",
  connects: true,
  flags: OUTPUT_FLAG,
  async run({ flags, args, io }) {
    const [server = "", extra] = args;
    if (extra !== undefined) throw new CliError(`time: unexpected "${extra}"`, 2);
    const format = flags.output;
    using conn = await connectToNode(flags);
    const r = await conn.client.time({ server }, { timeoutMs: 15_000 });
    io.out(format === "table" ? formatTime(r) : formatDocument(r, format));
    return 0;
  },
});

/** The status row and, when measured, the query row. */
export function formatTime(r: TimeResponse): string {
  const s = r.status;
  const ms = (v: number | undefined) => (v === undefined ? "-" : `${v.toFixed(3)}ms`);
  const status = s
    ? alignTable([
      ["SYNCED", "SERVER", "ADDRESS", "OFFSET", "DELAY", "STRATUM", "SYNCS", "ERROR"],
      [
        s.disabled ? "disabled" : String(s.synced),
        s.server || "-",
        s.address || "-",
        ms(s.offsetMs),
        ms(s.delayMs),
        s.stratum === undefined ? "-" : String(s.stratum),
        String(s.syncCount),
        s.lastError || "-",
      ],
    ])
    : "no time status yet";
  if (!r.query) return status;
  const q = r.query;
  return status + "\n\n" + alignTable([
    ["QUERIED", "ADDRESS", "STRATUM", "OFFSET", "DELAY"],
    [q.server, q.address, String(q.stratum), ms(q.offsetMs), ms(q.delayMs)],
  ]);
}
