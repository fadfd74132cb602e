/**
 * `machinectl gen signing-key --out DIR`: an Ed25519 key pair for signing
 * upgrade bundles (`deno task image --bundle OUT --signing-key DIR/signing-key.pem`).
 * The public key goes into the machine config's `machine.upgrade.trusted_keys`.
 */
import { join } from "node:path";
import { generateSigningKey } from "../../bundle/mod.ts";
import { defineCommand } from "../command.ts";
import { CliError } from "../io.ts";

export const genSigningKeyCommand = defineCommand({
  name: "gen signing-key",
  summary: "Generate an Ed25519 key pair that signs upgrade bundles",
  connects: false,
  flags: {
    out: { kind: "string", default: ".", value: "DIR", help: "output directory" },
    force: { kind: "boolean", help: "overwrite existing files" },
  },
  async run({ flags, io }) {
    const key = await generateSigningKey();
    const priv = join(flags.out, "signing-key.pem");
    const pub = join(flags.out, "signing-key.pub.pem");
    await Deno.mkdir(flags.out, { recursive: true });
    for (const p of [priv, pub]) {
      if (!flags.force && await Deno.stat(p).then(() => true, () => false)) {
        throw new CliError(`gen signing-key: ${p} exists (use --force to overwrite)`);
      }
    }
    await Deno.writeTextFile(priv, key.privatePem, { mode: 0o600 });
    await Deno.chmod(priv, 0o600);
    await Deno.writeTextFile(pub, key.publicPem);
    io.out(`wrote ${priv} (private: signs bundles; keep it safe)`);
    io.out(`wrote ${pub} (public, key id ${key.kid}): list it in machine.upgrade.trusted_keys`);
    return 0;
  },
});
