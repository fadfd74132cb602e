/**
 * `machinectl gen secureboot-keys --out DIR [--owner NAME]`: the node
 * owner's UEFI Secure Boot keys (PK, KEK, db: `<name>.crt` and `<name>.key`),
 * for `deno task image --secure-boot-keys DIR`, which signs the boot loader
 * and each slot's Unified Kernel Image with db and puts the enrollment files
 * on the ESP (docs/secure-boot.md).
 */
import { join } from "node:path";
import {
  generateSecureBootKeys,
  SECURE_BOOT_KEY_NAMES,
  secureBootKeyFiles,
} from "../../pki/mod.ts";
import { defineCommand } from "../command.ts";
import { CliError } from "../io.ts";

export const genSecureBootKeysCommand = defineCommand({
  name: "gen secureboot-keys",
  summary: "Generate the UEFI Secure Boot keys (PK, KEK, db) that sign and enroll an image",
  connects: false,
  flags: {
    out: { kind: "string", default: ".", value: "DIR", help: "output directory" },
    owner: {
      kind: "string",
      default: "machined",
      value: "NAME",
      help: "the organisation named in the certificates",
    },
    force: { kind: "boolean", help: "overwrite existing files" },
  },
  async run({ flags, io }) {
    const paths = SECURE_BOOT_KEY_NAMES.flatMap((n) => {
      const f = secureBootKeyFiles(n);
      return [join(flags.out, f.cert), join(flags.out, f.key)];
    });
    for (const p of paths) {
      if (!flags.force && await Deno.stat(p).then(() => true, () => false)) {
        throw new CliError(`gen secureboot-keys: ${p} exists (use --force to overwrite)`);
      }
    }
    const keys = await generateSecureBootKeys(flags.owner);
    await Deno.mkdir(flags.out, { recursive: true });
    for (const name of SECURE_BOOT_KEY_NAMES) {
      const f = secureBootKeyFiles(name);
      const key = join(flags.out, f.key);
      await Deno.writeTextFile(key, keys[name].keyPem, { mode: 0o600 });
      await Deno.chmod(key, 0o600);
      await Deno.writeTextFile(join(flags.out, f.cert), keys[name].certPem);
    }
    io.out(`wrote PK, KEK and db (.crt and .key) in ${flags.out}`);
    io.out("the .key files are private: db signs what boots, KEK and PK change what is trusted");
    return 0;
  },
});
