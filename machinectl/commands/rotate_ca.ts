/**
 * `machinectl rotate-ca FILE...` (admin): replaces the node CA of one node or
 * a fleet (`-n a,b,c`, else the context's `nodes`, else its endpoint) without
 * ever leaving a node unreachable. FILE is each node's machine config (the
 * one it runs, with `machine.ca.key`), in the nodes' order; rotate-ca edits
 * its `machine.ca` and applies it live. Without `--finish` the nodes end up
 * serving the new CA while still accepting old client certificates; with it,
 * the old CA is dropped. A cut run resumes when run again (docs/api.md, "Rotating the CA").
 */
import { defineCommand } from "../command.ts";
import { clientConfigPath } from "../connection.ts";
import { splitNodes } from "../fanout.ts";
import { CliError } from "../io.ts";
import { readClientConfig, resolveCredentials } from "../../pki/mod.ts";
import { rotateCa } from "../rotate_ca/mod.ts";

export const rotateCaCommand = defineCommand({
  name: "rotate-ca",
  args: "FILE...",
  summary: "Replace the node CA of a node or fleet in phases, never leaving a node unreachable",
  connects: true,
  fleet: true,
  flags: {
    finish: {
      kind: "boolean",
      help: "also drop the old CA: old client configs are refused from then on",
    },
  },
  async run({ flags, args, io }) {
    if (args.length === 0) throw new CliError(`usage: machinectl ${rotateCaCommand.usage}`, 2);
    if (flags.insecure) throw new CliError("rotate-ca does not go with --insecure", 2);
    const configPath = clientConfigPath(flags);
    const nodes = await nodesOf(flags, configPath);
    if (nodes.length !== args.length) {
      throw new CliError(
        `rotate-ca needs one machine config FILE per node, in order: ${nodes.length} node(s) ` +
          `(${nodes.join(", ")}), ${args.length} file(s)`,
        2,
      );
    }
    try {
      const result = await rotateCa({
        nodes,
        files: args,
        configPath,
        context: flags.context,
        finish: !!flags.finish,
        out: (line) => io.out(line),
      });
      for (const [node, next] of Object.entries(result)) {
        io.out(`${node}: ${next === "done" ? "rotated" : "serves the new CA, accepts the old"}`);
      }
      return 0;
    } catch (e) {
      if (e instanceof CliError) throw e;
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : "";
      throw new CliError(
        `rotate-ca stopped: ${(e as Error).message}${cause}\n` +
          `run the same command again to resume (the state is kept beside the client config)`,
      );
    }
  },
});

/** `-n`, else `-e`, else the context's nodes, else its first endpoint. */
async function nodesOf(
  flags: { nodes?: string[]; endpoints?: string[]; context?: string },
  configPath: string,
): Promise<string[]> {
  const given = splitNodes(flags.nodes);
  if (given.length > 0) return given;
  if (flags.endpoints?.length) return splitNodes(flags.endpoints);
  try {
    const creds = resolveCredentials(await readClientConfig(configPath), flags.context);
    return creds.nodes?.length ? creds.nodes : creds.endpoints.slice(0, 1);
  } catch (e) {
    throw new CliError(`cannot use client config "${configPath}": ${(e as Error).message}`);
  }
}
