/**
 * The shape of the one-shot observability commands (`memory`, `mounts`): no
 * positionals, `-o table|json|yaml`, one unary call, the table or the plain
 * document. Kept in one place so they refuse arguments, time out and print
 * JSON/YAML the same way.
 */
import { type Command, defineCommand } from "../command.ts";
import { connectToNode, type NodeConnection } from "../connection.ts";
import { formatDocument, noArgs, OUTPUT_FLAG } from "./observe_format.ts";

/** What one snapshot command needs: its names, the call, and its table. */
export interface SnapshotCommandSpec<R> {
  name: string;
  aliases: readonly string[];
  summary: string;
  /** The unary call, e.g. `(c, o) => c.memory({}, o)`. */
  fetch(client: NodeConnection["client"], options: { timeoutMs: number }): Promise<R>;
  /** The `-o table` form of the response. */
  table(response: R): string;
}

/** A command that fetches one response and prints it as a table, JSON or YAML. */
export function snapshotCommand<R>(spec: SnapshotCommandSpec<R>): Command {
  return defineCommand({
    name: spec.name,
    aliases: spec.aliases,
    summary: spec.summary,
    connects: true,
    flags: OUTPUT_FLAG,
    async run({ flags, args, io }) {
      noArgs(spec.name, args);
      const format = flags.output;
      using conn = await connectToNode(flags);
      const r = await spec.fetch(conn.client, { timeoutMs: 15_000 });
      io.out(format === "table" ? spec.table(r) : formatDocument(r, format));
      return 0;
    },
  });
}
