/** `machinectl version`: the client's version and the node's. */
import { connectToNode } from "../connection.ts";
import { defineCommand } from "../command.ts";
import { MACHINECTL_VERSION } from "../version.ts";
import { esc } from "../terminal_text.ts";
import type { VersionResponse } from "../../api/gen/machined/v1/machine_pb.ts";

export const versionCommand = defineCommand({
  name: "version",
  summary: "Show the client and node versions",
  connects: true,
  flags: {
    client: { kind: "boolean", help: "only the client version" },
  },
  async run({ flags, io }) {
    io.out(`Client:\n\tmachinectl ${MACHINECTL_VERSION} (deno ${Deno.version.deno})`);
    if (flags.client) return 0;
    using conn = await connectToNode(flags);
    const v = await conn.client.version({}, { timeoutMs: 10_000 });
    io.out(formatServerVersion(conn.endpoint, v));
    return 0;
  },
});

/**
 * The node's half of `machinectl version`, escaped. The image line says which
 * image and slot booted, so an upgrade shows (machined's own version does not
 * change with the image's); `-` where the node did not boot from an image (dev mode).
 */
export function formatServerVersion(endpoint: string, v: VersionResponse): string {
  return esc`Server (${endpoint}):\n\tmachined ${v.version}` +
    (v.commit ? esc` (${v.commit})` : "") +
    esc`\n\timage ${v.imageVersion || "-"}, slot ${v.slot || "-"}` +
    esc`\n\tdeno ${v.denoVersion}\n\t${v.os}/${v.arch}\n\thostname ${v.hostname}`;
}
