/**
 * `machinectl events`: what happened on the machine since boot (the node keeps
 * a bounded history), then every new event until Ctrl-C: boot phases and tasks,
 * service state changes, config, power. `-o json` prints one object per line.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { untilInterrupted } from "./follow.ts";

export const eventsCommand: Command = {
  name: "events",
  usage: "events [--kind KIND...] [--tail N] [-o table|json]",
  summary: "Show machine events since boot, then follow (phases, tasks, services, power)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    kind: { type: "string", multiple: true, description: "only these kinds" },
    tail: { type: "string", description: "replay only the last N past events" },
    output: { type: "string", short: "o", default: "table", description: "table or json" },
  },
  async run({ flags, io, signal: outer }) {
    const tail = flags.tail === undefined ? undefined : Number(flags.tail);
    if (tail !== undefined && !(Number.isInteger(tail) && tail >= 0)) {
      throw new CliError(`--tail must be a whole number, got "${flags.tail}"`);
    }
    if (flags.output !== "table" && flags.output !== "json") {
      throw new CliError(`unknown output format "${flags.output}" (use table or json)`);
    }
    using conn = await connectToNode(flags);
    await untilInterrupted(async (signal) => {
      const req = { kinds: flags.kind ?? [], tail };
      for await (const r of conn.client.events(req, { signal })) {
        const e = r.event;
        if (!e) continue;
        const time = e.time ? timestampDate(e.time).toISOString() : "";
        if (flags.output === "json") {
          io.out(JSON.stringify({
            seq: Number(e.seq),
            time,
            kind: e.kind,
            subject: e.subject,
            action: e.action,
            message: e.message,
            fields: e.fields,
          }));
          continue;
        }
        const extra = Object.entries(e.fields).map(([k, v]) => `${k}=${v}`).join(" ");
        io.out(
          `${time}  ${e.kind.padEnd(10)} ${e.subject.padEnd(32)} ${e.action.padEnd(10)} ` +
            [e.message, extra].filter(Boolean).join(" "),
        );
      }
    }, outer);
    return 0;
  },
};
