/** `machinectl events`: the machine's event stream (boot phases, tasks, services). */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode } from "../connection.ts";

export const eventsCommand: Command = {
  name: "events",
  usage: "events [--kind KIND...]",
  summary: "Stream machine events (boot phases, tasks, service changes)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    kind: { type: "string", multiple: true, description: "only these kinds" },
  },
  async run({ flags, io }) {
    const conn = await connectToNode(flags);
    const abort = new AbortController();
    const stop = () => abort.abort();
    Deno.addSignalListener("SIGINT", stop);
    try {
      for await (
        const r of conn.client.events({ kinds: flags.kind ?? [] }, { signal: abort.signal })
      ) {
        const e = r.event;
        if (!e) continue;
        const at = e.time ? timestampDate(e.time).toISOString() : "";
        io.out(`${at}  ${e.kind.padEnd(10)} ${e.subject.padEnd(32)} ${e.message}`);
      }
    } catch (e) {
      if (!abort.signal.aborted) throw e;
    } finally {
      Deno.removeSignalListener("SIGINT", stop);
    }
    return 0;
  },
};
