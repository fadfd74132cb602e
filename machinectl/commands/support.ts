/**
 * `machinectl support -o bundle.tar.gz`: a support bundle of the node, written
 * as a .tar.gz (see machinectl/support/bundle.ts for what is in it and how
 * secrets are kept out).
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { escapeText } from "../terminal_text.ts";
import { collectSupportBundle } from "../support/bundle.ts";
import { tarGz } from "../support/tar.ts";

export const supportCommand = defineCommand({
  name: "support",
  summary: "Write a support bundle (resources, logs, dmesg, graph, versions, redacted config)",
  connects: true,
  flags: {
    output: {
      kind: "string",
      short: "o",
      value: "FILE",
      default: "support.tar.gz",
      help: "the .tar.gz to write",
    },
  },
  async run({ flags, args, io }) {
    if (args.length > 0) throw new CliError(`support: unexpected "${args[0]}"`, 2);
    const file = flags.output as string;
    using conn = await connectToNode(flags);
    const entries = await collectSupportBundle(conn.client, conn.endpoint);
    const bytes = await tarGz(entries);
    await Deno.writeFile(file, bytes, { mode: 0o600 });
    const errors = new TextDecoder().decode(entries.at(-1)!.data).trim();
    io.out(`wrote ${file}: ${entries.length} files, ${bytes.length} bytes (${conn.endpoint})`);
    // One line per part not collected; the reasons are the node's words.
    const lines = errors.split("\n").map(escapeText).join("\n");
    if (!errors.startsWith("every part")) io.err(`not collected:\n${lines}`);
    return 0;
  },
});
