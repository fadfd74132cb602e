/**
 * Bundles no builder of ours would make (issue 28's holes), for the QEMU
 * cases to send over the API: a real bundle's head re-signed by the trusted
 * key after its manifest was edited, its files unchanged. signManifest
 * refuses such manifests, so this signs with jose directly, as a hostile or
 * careless signer would.
 *
 * @module
 */
import { CompactSign, decodeJwt } from "jose";
import { BUNDLE_MAGIC, encodeBundleHead, type Manifest, type SigningKey } from "../bundle/mod.ts";

/**
 * Copy the bundle at `from` to `to` with its manifest edited by `edit` and
 * signed again with `key`, without the builder's checks.
 */
export async function reSignedBundle(
  from: string,
  to: string,
  key: SigningKey,
  edit: (m: Manifest) => void,
): Promise<void> {
  using src = await Deno.open(from);
  const head = new Uint8Array(BUNDLE_MAGIC.length + 4);
  if ((await src.read(head)) !== head.length) throw new Error(`${from}: too short`);
  const length = new DataView(head.buffer).getUint32(BUNDLE_MAGIC.length);
  const jws = new Uint8Array(length);
  let at = 0;
  while (at < length) {
    const n = await src.read(jws.subarray(at));
    if (n === null) throw new Error(`${from}: truncated manifest`);
    at += n;
  }
  const manifest = decodeJwt(new TextDecoder().decode(jws)) as unknown as Manifest;
  edit(manifest);
  const signed = await new CompactSign(new TextEncoder().encode(JSON.stringify(manifest)))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: "machined-bundle+jws" })
    .sign(key.privateKey);
  using out = await Deno.open(to, { write: true, create: true, truncate: true });
  await writeAll(out, encodeBundleHead(signed));
  const buf = new Uint8Array(1 << 20);
  for (;;) {
    const n = await src.read(buf);
    if (n === null) break;
    await writeAll(out, buf.subarray(0, n));
  }
}

async function writeAll(f: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await f.write(bytes.subarray(at));
}
