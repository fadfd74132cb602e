import assert from "node:assert/strict";
import { CompactSign } from "jose";
import { readBundle } from "./bundle_reader.ts";
import { encodeBundleHead } from "./bundle_format.ts";
import { BundleError, type BundleRefusal } from "./errors.ts";
import { hostCompatible, type Manifest } from "./manifest.ts";
import { chunked, concat, testBundle, testKeys } from "../upgrade/testing.ts";

const machine = hostCompatible();

/** A sink that collects each file's bytes. */
function collect() {
  const files = new Map<string, Uint8Array>();
  let verified: Manifest | undefined;
  return {
    files,
    get verified() {
      return verified;
    },
    sink: {
      verified(m: Manifest) {
        verified = m;
        return Promise.resolve();
      },
      async file(f: { name: string }, chunks: AsyncIterable<Uint8Array>) {
        const parts: Uint8Array[] = [];
        for await (const c of chunks) parts.push(c.slice());
        files.set(f.name, concat(parts));
      },
    },
  };
}

async function refused(
  bytes: Uint8Array,
  keys: Awaited<ReturnType<typeof testKeys>>["trusted"][],
  reason: BundleRefusal,
  m = machine,
) {
  const c = collect();
  const err = await readBundle(chunked(bytes, 777), { keys, machine: m }, c.sink).then(
    () => undefined,
    (e) => e,
  );
  assert.ok(err instanceof BundleError, `refused with a BundleError, got ${err}`);
  assert.equal(err.reason, reason, err.message);
  return { err, c };
}

Deno.test("a good bundle streams through: manifest verified first, every file's bytes delivered", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing });
  const c = collect();
  const seen: number[] = [];
  const m = await readBundle(
    chunked(b.bytes, 333),
    { keys: [k.trusted], machine },
    c.sink,
    (r) => seen.push(r),
  );
  assert.equal(m.version, "2.0.0");
  assert.deepEqual([...c.files.keys()], ["vmlinuz", "initramfs.img", "root.img"]);
  for (const [i, f] of b.files.entries()) assert.deepEqual(c.files.get(m.files[i].name), f);
  assert.equal(seen.at(-1), b.bytes.length);
});

Deno.test("refused: one flipped byte in the signed manifest (bad-signature), no file delivered", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing });
  const bytes = b.bytes.slice();
  // The JWS starts at byte 20: header.payload.signature; flip a payload character.
  const jwsLen = new DataView(bytes.buffer).getUint32(16);
  const jws = new TextDecoder().decode(bytes.subarray(20, 20 + jwsLen));
  const at = 20 + jws.indexOf(".") + 5;
  bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
  const { c } = await refused(bytes, [k.trusted], "bad-signature");
  assert.equal(c.verified, undefined);
  assert.equal(c.files.size, 0);
});

Deno.test("refused: signed by a key the node does not trust (unknown-key)", async () => {
  const k = await testKeys();
  const other = await testKeys();
  const b = await testBundle({ key: other.signing });
  await refused(b.bytes, [k.trusted], "unknown-key");
});

Deno.test("refused: a forged kid of a trusted key over another key's signature (bad-signature)", async () => {
  const k = await testKeys();
  const other = await testKeys();
  const b = await testBundle({ key: { kid: k.signing.kid, privateKey: other.signing.privateKey } });
  await refused(b.bytes, [k.trusted], "bad-signature");
});

Deno.test("refused: alg none and HS256 keyed with the public key (wrong-algorithm)", async () => {
  const k = await testKeys();
  const b64 = (s: string) => btoa(s).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  const payload = b64(JSON.stringify((await testBundle({ key: k.signing })).manifest));
  const none = `${b64(JSON.stringify({ alg: "none", kid: k.trusted.kid }))}.${payload}.`;
  await refused(encodeBundleHead(none), [k.trusted], "wrong-algorithm");
  const hs = await new CompactSign(new TextEncoder().encode("{}"))
    .setProtectedHeader({ alg: "HS256", kid: k.trusted.kid })
    .sign(new TextEncoder().encode(k.publicPem));
  await refused(encodeBundleHead(hs), [k.trusted], "wrong-algorithm");
});

Deno.test("refused: built for another architecture or board (wrong-compatible)", async () => {
  const k = await testKeys();
  const arm = await testBundle({
    key: k.signing,
    compatible: { arch: "aarch64", board: "uefi-pc" },
  });
  await refused(arm.bytes, [k.trusted], "wrong-compatible");
  const rpi = await testBundle({ key: k.signing, compatible: { ...machine, board: "rpi4" } });
  await refused(rpi.bytes, [k.trusted], "wrong-compatible");
});

Deno.test("refused: a file whose bytes differ from the manifest's sha256 (file-mismatch)", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing });
  const bytes = b.bytes.slice();
  bytes[bytes.length - 10] ^= 0xff; // inside root.img
  const { err } = await refused(bytes, [k.trusted], "file-mismatch");
  assert.match(String(err), /root\.img/);
});

Deno.test("refused: a truncated bundle, in the head or in a file (truncated)", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing });
  await refused(b.bytes.subarray(0, b.bytes.length - 1), [k.trusted], "truncated");
  await refused(b.bytes.subarray(0, 30), [k.trusted], "truncated");
  await refused(new Uint8Array(0), [k.trusted], "truncated");
});

Deno.test("refused: bytes after the last file, a wrong magic, a manifest of the wrong shape", async () => {
  const k = await testKeys();
  const b = await testBundle({ key: k.signing });
  await refused(concat([b.bytes, new Uint8Array([0])]), [k.trusted], "trailing-bytes");
  const magic = b.bytes.slice();
  magic[0] = 0;
  await refused(magic, [k.trusted], "bad-magic");
  const shape = await testBundle({
    key: k.signing,
    edit: (m) => (m.files = m.files.slice(0, 2)),
  }).catch((e) => e);
  assert.ok(shape instanceof Error, "signManifest itself refuses a manifest of the wrong shape");
});

Deno.test("a 64 MiB bundle streams with memory bounded by the chunk, not the bundle", async () => {
  const k = await testKeys();
  const big = new Uint8Array(64 << 20).fill(7);
  const b = await testBundle({
    key: k.signing,
    files: [new Uint8Array(10).fill(1), new Uint8Array(10).fill(2), big],
  });
  let max = 0;
  await readBundle(chunked(b.bytes, 1 << 20), { keys: [k.trusted], machine }, {
    verified: () => Promise.resolve(),
    async file(_f, chunks) {
      for await (const c of chunks) max = Math.max(max, c.length);
    },
  });
  assert.ok(max <= 1 << 20, `largest chunk handed on ${max}`);
});
