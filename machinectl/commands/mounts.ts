/** `machinectl mounts`: every mount with its filesystem's size and use, like `df`. */
import type { MountsResponse } from "../../api/gen/machined/v1/machine_pb.ts";
import type { Command } from "../command.ts";
import { alignTable } from "../output.ts";
import { snapshotCommand } from "./observe_command.ts";
import { clip, formatBytes } from "./observe_format.ts";

export const mountsCommand: Command = snapshotCommand({
  name: "mounts",
  aliases: ["df"],
  summary: "List mounts: source, target, type, size, use, options",
  fetch: (client, options) => client.mounts({}, options),
  table: (r) => formatMounts(r),
});

/** The mounts table; USE% is used / (used + available), as df computes it. */
export function formatMounts(r: MountsResponse): string {
  return alignTable([
    ["SOURCE", "TARGET", "TYPE", "SIZE", "USED", "AVAIL", "USE%", "OPTIONS"],
    ...r.mounts.map((m) => {
      const used = m.usedBytes === undefined ? undefined : Number(m.usedBytes);
      const avail = m.availableBytes === undefined ? undefined : Number(m.availableBytes);
      const pct = used !== undefined && avail !== undefined && used + avail > 0
        ? `${Math.ceil((100 * used) / (used + avail))}%`
        : "-";
      return [
        m.source,
        m.target,
        m.fstype,
        formatBytes(m.sizeBytes),
        formatBytes(m.usedBytes),
        formatBytes(m.availableBytes),
        pct,
        clip(m.options, 60),
      ];
    }),
  ]);
}
