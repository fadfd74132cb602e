import assert from "node:assert/strict";
import { generateSigningKey, loadSigningKey, loadTrustedKey } from "./signing_key.ts";
import { type Manifest, signManifest, verifyManifest } from "./manifest.ts";

const pair = await generateSigningKey();
const key = await loadSigningKey(pair.privatePem);
const trusted = [await loadTrustedKey(pair.publicPem)];
const machine = { arch: "x86_64", board: "uefi-pc" };
const hex = "ab".repeat(32);
const base: Manifest = {
  format: 1,
  compatible: machine,
  version: "2.0.0",
  cmdline: "quiet",
  files: ["vmlinuz", "initramfs.img", "root.img"].map((name) => ({
    name: name as "vmlinuz",
    size: 10,
    sha256: hex,
  })),
};

Deno.test("a manifest's system extensions are signed and read back", async () => {
  const ext = { name: "hello", version: "1.0", sha256: hex, size: 4096 };
  const jws = await signManifest({ ...base, extensions: [ext] }, key);
  const { manifest } = await verifyManifest(jws, trusted, machine);
  assert.deepEqual(manifest.extensions, [ext]);
  const plain = await verifyManifest(await signManifest(base, key), trusted, machine);
  assert.equal(plain.manifest.extensions, undefined);
});

Deno.test("a manifest's extensions are refused when named twice, badly named or empty", async () => {
  const ext = { name: "hello", version: "1.0", sha256: hex, size: 4096 };
  for (
    const extensions of [[ext, { ...ext, version: "2" }], [{ ...ext, name: "../x" }], [
      { ...ext, version: "1 0" },
    ], []]
  ) {
    await assert.rejects(signManifest({ ...base, extensions }, key), JSON.stringify(extensions));
  }
});
