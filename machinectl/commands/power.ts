/** `machinectl reboot` and `machinectl shutdown` (operator role). */
import { Code, ConnectError } from "@connectrpc/connect";
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
    try {
      await conn.client.reboot({}, { timeoutMs: 15_000 });
    } catch (e) {
      if (!closedAsItWentDown(e)) throw e;
      io.out(`reboot requested (${conn.endpoint}); the connection closed as the node went down`);
      return 0;
    }
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

/**
 * The node accepts a power action, answers, then stops apid: under load the
 * answer can be lost with the connection ("stream closed ... before the
 * response"). The request was sent and the node is going down, which is what
 * was asked; `--rolling` then checks it really went down and came back.
 */
function closedAsItWentDown(e: unknown): boolean {
  return e instanceof ConnectError &&
    (e.code === Code.Internal || e.code === Code.Unavailable) &&
    /stream closed with error code NO_ERROR|before the response was received/i.test(e.message);
}
