/**
 * `machinectl inspect dependencies`: the controller graph (controllers, the
 * resource types they read and write) from the ControllerGraph RPC, as
 * Graphviz DOT, or rendered to SVG or PNG by Graphviz's `dot`.
 */
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { dependencyDot, renderDot, type RenderFormat } from "../dependency_dot.ts";

export const inspectDependenciesCommand: Command = {
  name: "inspect dependencies",
  aliases: ["inspect deps"],
  usage: "inspect dependencies [-o dot|svg|png] [--file PATH]",
  summary: "The controller graph as Graphviz DOT (svg/png rendered with graphviz)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    output: { type: "string", short: "o", default: "dot", description: "dot, svg or png" },
    file: { type: "string", description: "write to PATH instead of stdout (needed for png)" },
  },
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`inspect dependencies: unexpected "${args[0]}"`, 2);
    const format = flags.output as string;
    if (!["dot", "svg", "png"].includes(format)) {
      throw new CliError(`unknown output format "${format}" (use dot, svg or png)`);
    }
    if (format === "png" && !flags.file) {
      throw new CliError("inspect dependencies -o png writes binary: give --file PATH", 2);
    }
    using conn = await connectToNode(flags);
    const graph = await conn.client.controllerGraph({}, { timeoutMs: 15_000 });
    const dot = dependencyDot(graph.controllers);
    const bytes = format === "dot"
      ? new TextEncoder().encode(dot)
      : await renderDot(dot, format as RenderFormat);
    if (flags.file) {
      await Deno.writeFile(flags.file, bytes);
      io.err(`wrote ${flags.file} (${graph.controllers.length} controllers, ${format})`);
    } else io.out(new TextDecoder().decode(bytes).trimEnd());
    return 0;
  },
};
