/**
 * `machinectl unlock VOLUME` (operator role): supplies a passphrase for a
 * volume the node left `locked` (no configured key opened its header). The
 * passphrase comes from the terminal without echo, from `--passphrase-file`
 * (`-`: stdin) or from piped stdin, never from argv. The node answers once
 * the volume's mapping is open; it then mounts as if its key had worked.
 * With `-n a,b,c` the passphrase is read once and offered to each node in
 * turn (a fleet sharing a recovery passphrase after a board swap); every
 * node gets its line, a failure does not stop the others, and the exit code
 * is the highest of the nodes'.
 */
import { defineCommand } from "../command.ts";
import { connectToNode } from "../connection.ts";
import { CliError } from "../io.ts";
import { readSecret, readSecretFile } from "../secret_input.ts";
import { esc } from "../terminal_text.ts";
import { splitNodes } from "../fanout.ts";
import { describeError } from "../errors.ts";
import { errorForDisplay } from "../error_text.ts";
import type { Io } from "../io.ts";
import type { ConnectionFlags } from "../connection.ts";

export const unlockCommand = defineCommand({
  name: "unlock",
  args: "VOLUME",
  summary: "Unlock a locked encrypted volume (STATE, EPHEMERAL) with a passphrase",
  connects: true,
  // `-n` is read here: the passphrase is read once for every node, not once per node.
  fleet: true,
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
      const nodes = splitNodes(flags.nodes);
      if (nodes.length === 0) return await unlockOne(flags, volume, passphrase, io);
      let worst = 0;
      for (const node of nodes) {
        const one = { ...flags, endpoints: [node], nodes: undefined };
        try {
          worst = Math.max(worst, await unlockOne(one, volume, passphrase, io));
        } catch (e) {
          io.err(esc`${node}: error: ${errorForDisplay(e, (x) => describeError(x, node))}`);
          worst = Math.max(worst, e instanceof CliError ? e.exitCode : 1);
        }
      }
      return worst;
    } finally {
      passphrase.fill(0);
    }
  },
});

/** Offers the passphrase to the one node `flags` names; prints its line. */
async function unlockOne(
  flags: ConnectionFlags,
  volume: string,
  passphrase: Uint8Array,
  io: Io,
): Promise<number> {
  using conn = await connectToNode(flags);
  const r = await conn.client.unlockVolume({ volume, passphrase }, { timeoutMs: 180_000 });
  io.out(esc`${r.volume} unlocked by slot ${r.slot}: ${r.mappingPath} (${conn.endpoint})`);
  return 0;
}
