/** `gen signing-key --out DIR` names the files it wrote with the paths joined properly. */
import { equal, match } from "node:assert/strict";
import { runMachinectl } from "./cli.ts";
import { bufferIo } from "./io.ts";

Deno.test("gen signing-key --out keys/ prints keys/signing-key.pem, not keys//signing-key.pem", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const io = bufferIo();
    equal(await runMachinectl(["gen", "signing-key", "--out", `${dir}/keys/`], io), 0);
    const out = io.stdout.join("\n");
    equal(out.includes("//"), false, out);
    match(out, new RegExp(`wrote ${dir}/keys/signing-key\\.pem `));
    match(out, new RegExp(`wrote ${dir}/keys/signing-key\\.pub\\.pem `));
    await Deno.stat(`${dir}/keys/signing-key.pem`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
