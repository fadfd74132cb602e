/**
 * `machinectl events`: what happened on the machine since boot (the node keeps
 * a bounded history), then every new event until Ctrl-C: boot phases and tasks,
 * service state changes, config, power. `-o json` prints one object per line,
 * `-o yaml` one document per event. Every field is escaped (one event, one line).
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { defineCommand } from "../command.ts";
import { OUTPUT_FLAG } from "./observe_format.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { untilInterrupted } from "./follow.ts";
import { toJson, toYaml } from "../document_text.ts";
import { escapeText } from "../terminal_text.ts";

export const eventsCommand = defineCommand({
  name: "events",
  summary: "Show machine events since boot, then follow (phases, tasks, services, power)",
  connects: true,
  flags: {
    kind: { kind: "strings", help: "only these kinds" },
    tail: { kind: "string", value: "N", help: "replay only the last N past events" },
    ...OUTPUT_FLAG,
  },
  async run({ flags, io, signal: outer }) {
    const tail = flags.tail === undefined ? undefined : Number(flags.tail);
    if (tail !== undefined && !(Number.isInteger(tail) && tail >= 0)) {
      throw new CliError(`--tail must be a whole number, got "${flags.tail}"`);
    }
    using conn = await connectToNode(flags);
    await untilInterrupted(async (signal) => {
      const req = { kinds: flags.kind ?? [], tail };
      for await (const r of conn.client.events(req, { signal })) {
        const e = r.event;
        if (!e) continue;
        const time = e.time ? timestampDate(e.time).toISOString() : "";
        const doc = {
          seq: Number(e.seq),
          time,
          kind: e.kind,
          subject: e.subject,
          action: e.action,
          message: e.message,
          fields: { ...e.fields },
        };
        if (flags.output === "json") io.out(toJson(doc));
        else if (flags.output === "yaml") io.out(toYaml(doc) + "\n---");
        else io.out(formatEventLine(doc));
      }
    }, outer);
    return 0;
  },
});

/** One event as a line: time, kind, subject, action, message, fields; every field escaped. */
export function formatEventLine(
  e: {
    time: string;
    kind: string;
    subject: string;
    action: string;
    message: string;
    fields: Record<string, string>;
  },
): string {
  const f = (s: string, width = 0) => escapeText(s).padEnd(width);
  const extra = Object.entries(e.fields).map(([k, v]) => `${f(k)}=${f(v)}`).join(" ");
  return `${f(e.time)}  ${f(e.kind, 10)} ${f(e.subject, 32)} ${f(e.action, 10)} ` +
    [f(e.message), extra].filter(Boolean).join(" ");
}
