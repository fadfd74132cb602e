/** `machinectl logs ID [-f] [--tail N]`: a service's output, or machined's own (`machined`). */
import { logEntryFromProto } from "../../api/mapping/mod.ts";
import type { LogEntry } from "../../api/server/mod.ts";
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { parseTail, untilInterrupted } from "./follow.ts";
import { esc, escapeText } from "../terminal_text.ts";

export const logsCommand = defineCommand({
  name: "logs",
  args: "ID",
  summary: "Print a service's output (ID `machined`: machined's own log); -f follows",
  connects: true,
  flags: {
    follow: { kind: "boolean", short: "f", help: "keep printing new lines until Ctrl-C" },
    tail: { kind: "string", value: "N", help: "only the last N lines kept" },
    timestamps: {
      kind: "boolean",
      short: "t",
      help: "prefix each line with time and stream",
    },
  },
  async run({ flags, args, io, signal: outer }) {
    const [id, extra] = args;
    if (!id || extra !== undefined) {
      throw new CliError(
        `usage: machinectl ${logsCommand.usage} (ID \`machined\`: machined's own)`,
        2,
      );
    }
    const tail = parseTail(flags.tail);
    const follow = !!flags.follow;
    using conn = await connectToNode(flags);
    await untilInterrupted(async (signal) => {
      const stream = conn.client.logs(
        { id, tail, follow },
        follow ? { signal } : { signal, timeoutMs: 60_000 },
      );
      for await (const m of stream) io.out(formatLogLine(logEntryFromProto(m), !!flags.timestamps));
    }, outer);
    return 0;
  },
});

/**
 * One line as printed: the text, or `TIME STREAM text` with timestamps. The
 * text is escaped whole (escapeText): a CR cannot overwrite the line, and a
 * line break inside an entry shows as `\n` rather than starting a line the
 * service did not get to own (one entry, one printed line).
 */
export function formatLogLine(l: LogEntry, timestamps: boolean): string {
  const line = escapeText(l.text);
  return timestamps ? esc`${new Date(l.time).toISOString()} ${l.stream} ` + line : line;
}
