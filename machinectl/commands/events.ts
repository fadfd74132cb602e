/** `machinectl events`: the machine's event stream (boot phases, tasks, services). */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { untilInterrupted } from "./follow.ts";

export const eventsCommand: Command = {
  name: "events",
  usage: "events [--kind KIND...]",
  summary: "Stream machine events (boot phases, tasks, service changes)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    kind: { type: "string", multiple: true, description: "only these kinds" },
  },
  async run({ flags, io, signal: outer }) {
    using conn = await connectToNode(flags);
    await untilInterrupted(async (signal) => {
      for await (const r of conn.client.events({ kinds: flags.kind ?? [] }, { signal })) {
        const e = r.event;
        if (!e) continue;
        const at = e.time ? timestampDate(e.time).toISOString() : "";
        io.out(`${at}  ${e.kind.padEnd(10)} ${e.subject.padEnd(32)} ${e.message}`);
      }
    }, outer);
    return 0;
  },
};
