/**
 * `machinectl unlock VOLUME` (operator role): supplies a passphrase for a
 * volume the node left `locked` (no configured key opened its header). The
 * passphrase comes from the terminal without echo, from `--passphrase-file`
 * (`-`: stdin) or from piped stdin, never from argv. The node answers once
 * the volume's mapping is open; it then mounts as if its key had worked.
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { readSecret, readSecretFile } from "../secret_input.ts";
import { esc } from "../terminal_text.ts";

export const unlockCommand = defineCommand({
  name: "unlock",
  args: "VOLUME",
  summary: "Unlock a locked encrypted volume (STATE, EPHEMERAL) with a passphrase",
  connects: true,
  flags: {
    "passphrase-file": {
      kind: "string",
      value: "PATH",
      help: "read the passphrase from this file (- for stdin); default: the terminal, no echo",
    },
  },
  async run({ args, flags, io }) {
    if (args.length !== 1) throw new CliError("usage: machinectl unlock VOLUME", 2);
    const volume = args[0].toUpperCase();
    const file = flags["passphrase-file"];
    const passphrase = file !== undefined
      ? await readSecretFile(file)
      : await (io.secret ?? readSecret)(`passphrase for ${volume}: `);
    try {
      if (passphrase.length === 0) throw new CliError("no passphrase read: nothing sent", 2);
      using conn = await connectToNode(flags);
      const r = await conn.client.unlockVolume({ volume, passphrase }, { timeoutMs: 180_000 });
      io.out(esc`${r.volume} unlocked by slot ${r.slot}: ${r.mappingPath} (${conn.endpoint})`);
      return 0;
    } finally {
      passphrase.fill(0);
    }
  },
});
