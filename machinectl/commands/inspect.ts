/**
 * `machinectl inspect dependencies`: the controller graph (controllers, the
 * resource types they read and write) from the ControllerGraph RPC, as
 * Graphviz DOT, or rendered to SVG or PNG by Graphviz's `dot`.
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { dependencyDot, renderDot } from "../dependency_dot.ts";

export const inspectDependenciesCommand = defineCommand({
  name: "inspect dependencies",
  aliases: ["inspect deps"],
  summary: "The controller graph as Graphviz DOT (svg/png rendered with graphviz)",
  connects: true,
  flags: {
    output: {
      kind: "enum",
      short: "o",
      values: ["dot", "svg", "png"],
      default: "dot",
      noun: "output format",
      help: "dot, svg or png",
    },
    file: {
      kind: "string",
      value: "PATH",
      help: "write to PATH instead of stdout (needed for png)",
    },
  },
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`inspect dependencies: unexpected "${args[0]}"`, 2);
    const format = flags.output;
    if (format === "png" && !flags.file) {
      throw new CliError("inspect dependencies -o png writes binary: give --file PATH", 2);
    }
    using conn = await connectToNode(flags);
    const graph = await conn.client.controllerGraph({}, { timeoutMs: 15_000 });
    const dot = dependencyDot(graph.controllers);
    const bytes = format === "dot" ? new TextEncoder().encode(dot) : await renderDot(dot, format);
    if (flags.file) {
      await Deno.writeFile(flags.file, bytes);
      io.err(`wrote ${flags.file} (${graph.controllers.length} controllers, ${format})`);
    } else io.out(new TextDecoder().decode(bytes).trimEnd());
    return 0;
  },
});
