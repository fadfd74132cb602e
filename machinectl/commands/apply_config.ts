/**
 * `machinectl apply-config -f FILE [--dry-run]` (admin role): sends a machine
 * config to the node, which validates it and puts it in force. An invalid
 * config changes nothing; every error is printed as `FILE:line:col: path:
 * message (hint)`, as `validate` does, and the exit code is 1.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ApplyConfigurationResponseSchema } from "../../api/gen/machined/v1/machine_pb.ts";
import type { ConfigIssue } from "../../api/gen/machined/v1/resources_pb.ts";
import { ConfigState } from "../../api/gen/machined/v1/resources_pb.ts";
import { type Command, CONNECTION_FLAGS } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError, type Io } from "../io.ts";

export const applyConfigCommand: Command = {
  name: "apply-config",
  usage: "apply-config -f FILE [--dry-run]",
  summary: "Send a machine config to the node (validated there; --dry-run changes nothing)",
  connects: true,
  flags: {
    ...CONNECTION_FLAGS,
    file: { type: "string", short: "f", description: "machine config file" },
    "dry-run": { type: "boolean", description: "only validate on the node" },
  },
  async run({ flags, args, io }) {
    const file: string | undefined = flags.file ?? args[0];
    if (!file) throw new CliError("usage: machinectl apply-config -f FILE [--dry-run]", 2);
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (e) {
      throw new CliError(`cannot read "${file}": ${(e as Error).message}`);
    }
    const dryRun = !!flags["dry-run"];
    using conn = await connectToNode(flags);
    let errors: readonly ConfigIssue[];
    try {
      const r = await conn.client.applyConfiguration(
        { configYaml: text, dryRun },
        { timeoutMs: 60_000 },
      );
      if (r.state === ConfigState.VALID) {
        io.out(
          dryRun
            ? `${file}: valid; nothing changed (dry run on ${conn.endpoint})`
            : `${file}: applied on ${conn.endpoint}`,
        );
        return 0;
      }
      errors = r.errors;
    } catch (e) {
      const details = e instanceof ConnectError && e.code === Code.InvalidArgument
        ? e.findDetails(ApplyConfigurationResponseSchema)
        : [];
      if (details.length === 0) throw e;
      errors = details[0].errors;
    }
    printErrors(file, errors, dryRun, io);
    return 1;
  },
};

function printErrors(file: string, errors: readonly ConfigIssue[], dryRun: boolean, io: Io): void {
  for (const e of errors) {
    io.err(
      `${file}:${e.line}:${e.column}: ${e.path || "(document)"}: ${e.message}${
        e.hint ? ` (${e.hint})` : ""
      }`,
    );
  }
  const n = errors.length;
  io.err(
    `${file}: ${n} error${n === 1 ? "" : "s"}; the node ${
      dryRun ? "would refuse this config" : "refused it and kept its config"
    }`,
  );
}
