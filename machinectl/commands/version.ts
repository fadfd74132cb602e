/** `machinectl version`: the client's version and the node's. */
import { connectToNode } from "../connection.ts";
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { MACHINECTL_VERSION } from "../version.ts";
import { esc } from "../terminal_text.ts";

export const versionCommand: Command = {
  name: "version",
  usage: "version [--client]",
  summary: "Show the client and node versions",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    client: { type: "boolean", description: "only the client version" },
  },
  async run({ flags, io }) {
    io.out(`Client:\n\tmachinectl ${MACHINECTL_VERSION} (deno ${Deno.version.deno})`);
    if (flags.client) return 0;
    using conn = await connectToNode(flags);
    const v = await conn.client.version({}, { timeoutMs: 10_000 });
    io.out(
      esc`Server (${conn.endpoint}):\n\tmachined ${v.version}` +
        (v.commit ? esc` (${v.commit})` : "") +
        esc`\n\tdeno ${v.denoVersion}\n\t${v.os}/${v.arch}\n\thostname ${v.hostname}`,
    );
    return 0;
  },
};
