/**
 * The shape of the one-shot observability commands (`memory`, `mounts`): no
 * positionals, `-o table|json|yaml`, one unary call, the table or the plain
 * document. Kept in one place so they refuse arguments, time out and print
 * JSON/YAML the same way.
 */
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode, type NodeConnection } from "../connection.ts";
import { formatDocument, noArgs, OUTPUT_FLAG, outputFormat } from "./observe_format.ts";

/** What one snapshot command needs: its names, the call, and its table. */
export interface SnapshotCommandSpec<R> {
  name: string;
  aliases: readonly string[];
  usage: string;
  summary: string;
  /** The unary call, e.g. `(c, o) => c.memory({}, o)`. */
  fetch(client: NodeConnection["client"], options: { timeoutMs: number }): Promise<R>;
  /** The `-o table` form of the response. */
  table(response: R): string;
}

/** A command that fetches one response and prints it as a table, JSON or YAML. */
export function snapshotCommand<R>(spec: SnapshotCommandSpec<R>): Command {
  return {
    name: spec.name,
    aliases: spec.aliases,
    usage: spec.usage,
    summary: spec.summary,
    connects: true,
    flags: { ...CONNECTION_FLAGS, ...OUTPUT_FLAG },
    async run({ flags, args, io }) {
      noArgs(spec.name, args);
      const format = outputFormat(flags.output);
      using conn = await connectToNode(flags);
      const r = await spec.fetch(conn.client, { timeoutMs: 15_000 });
      io.out(format === "table" ? spec.table(r) : formatDocument(r, format));
      return 0;
    },
  };
}
