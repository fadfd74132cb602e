/** `machinectl reboot` and `machinectl shutdown` (operator role). */
import { connectToNode } from "../connection.ts";
import { type Command, CONNECTION_FLAGS } from "../command.ts";

export const rebootCommand: Command = {
  name: "reboot",
  usage: "reboot",
  summary: "Reboot the node (stops services, syncs, unmounts, reboots)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    rolling: {
      type: "boolean",
      description: "with -n: one node at a time, each back running before the next",
    },
  },
  async run({ flags, io }) {
    using conn = await connectToNode(flags);
    await conn.client.reboot({}, { timeoutMs: 15_000 });
    io.out(`reboot requested (${conn.endpoint})`);
    return 0;
  },
};

export const shutdownCommand: Command = {
  name: "shutdown",
  usage: "shutdown",
  summary: "Power the node off (stops services, syncs, unmounts, powers off)",
  connects: true,
  flags: { ...CONNECTION_FLAGS },
  async run({ flags, io }) {
    using conn = await connectToNode(flags);
    await conn.client.shutdown({}, { timeoutMs: 15_000 });
    io.out(`shutdown requested (${conn.endpoint})`);
    return 0;
  },
};
