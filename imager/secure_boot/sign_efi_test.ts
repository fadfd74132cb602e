import assert from "node:assert/strict";
import { join } from "node:path";
import { generateSecureBootKeys } from "../../pki/mod.ts";
import { buildUki } from "../uki/uki.ts";
import {
  ownerGuid,
  SECURE_BOOT_TOOLS,
  signEfi,
  verifiesWithDb,
  writeEnrollmentFiles,
  writeKeyFiles,
} from "./sign_efi.ts";

const STUB = "/usr/lib/systemd/boot/efi/linuxx64.efi.stub";
const has = async (cmd: string) =>
  (await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).output()).success;
const missing = [];
for (const t of SECURE_BOOT_TOOLS) if (!(await has(t))) missing.push(t);
const stub = await Deno.readFile(STUB).catch(() => undefined);
const keys = await generateSecureBootKeys("test");

Deno.test({
  name:
    "a UKI signed with db verifies with db's certificate, not another's; one changed byte of .cmdline fails",
  ignore: missing.length > 0 || !stub,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeKeyFiles(keys, join(dir, "keys"));
    const uki = buildUki({
      stub: stub!,
      kernel: new Uint8Array(5000).fill(1),
      initramfs: new Uint8Array(700).fill(2),
      cmdline: "console=ttyS0 machined.slot=A",
      osRelease: "ID=machined\n",
    });
    await Deno.writeFile(join(dir, "uki.efi"), uki);
    await signEfi(join(dir, "keys"), join(dir, "uki.efi"), join(dir, "signed.efi"));
    assert.ok(await verifiesWithDb(join(dir, "keys"), join(dir, "signed.efi")));
    assert.equal(await verifiesWithDb(join(dir, "keys"), join(dir, "uki.efi")), false);
    // Another owner's db does not verify it.
    await writeKeyFiles(await generateSecureBootKeys("other"), join(dir, "other"));
    assert.equal(await verifiesWithDb(join(dir, "other"), join(dir, "signed.efi")), false);
    // One byte of the signed command line changed: the signature no longer verifies.
    const signed = await Deno.readFile(join(dir, "signed.efi"));
    const at = indexOf(signed, new TextEncoder().encode("machined.slot=A"));
    assert.ok(at > 0);
    signed[at + "machined.slot=".length] = "B".charCodeAt(0);
    await Deno.writeFile(join(dir, "tampered.efi"), signed);
    assert.equal(await verifiesWithDb(join(dir, "keys"), join(dir, "tampered.efi")), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "enrollment files: PK, KEK and db .auth, the same bytes on a rebuild",
  ignore: missing.length > 0,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeKeyFiles(keys, join(dir, "keys"));
    const o = { pkCertPem: keys.PK.certPem, epoch: 1_700_000_000 };
    const a = await writeEnrollmentFiles(join(dir, "keys"), join(dir, "a"), o);
    const b = await writeEnrollmentFiles(join(dir, "keys"), join(dir, "b"), o);
    assert.deepEqual(a.map((p) => p.split("/").pop()), ["PK.auth", "KEK.auth", "db.auth"]);
    for (let i = 0; i < a.length; i++) {
      const [x, y] = [await Deno.readFile(a[i]), await Deno.readFile(b[i])];
      assert.ok(x.length > 1000, `${a[i]} holds a signature and a certificate`);
      assert.deepEqual(x, y, `${a[i]} is reproducible`);
    }
    assert.match(
      ownerGuid(keys.PK.certPem),
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
