import assert from "node:assert/strict";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";
import { loadSecureBootKeys } from "../pki/mod.ts";

Deno.test("gen secureboot-keys writes PK, KEK and db that load back, keys 0600, and never overwrites without --force", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const io = bufferIo();
    assert.equal(
      await runMachinectl(["gen", "secureboot-keys", "--out", dir, "--owner", "lab"], io),
      0,
    );
    const keys = await loadSecureBootKeys((f) => Deno.readTextFile(`${dir}/${f}`));
    assert.match(keys.db.certPem, /BEGIN CERTIFICATE/);
    assert.equal((await Deno.stat(`${dir}/db.key`)).mode! & 0o777, 0o600);
    const again = bufferIo();
    assert.equal(await runMachinectl(["gen", "secureboot-keys", "--out", dir], again), 1);
    assert.match(again.stderr.join("\n"), /exists \(use --force/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
