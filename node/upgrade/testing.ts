/**
 * Test helpers: small in-memory bundles signed with a fresh key, and a
 * stream of them in chunks of a chosen size.
 */
import { createHash } from "node:crypto";
import { encodeBundleHead } from "./bundle_format.ts";
import {
  type Compatible,
  hostCompatible,
  type Manifest,
  signManifest,
  SLOT_FILES,
} from "./manifest.ts";
import {
  generateSigningKey,
  loadSigningKey,
  loadTrustedKey,
  type SigningKey,
  type TrustedKey,
} from "./signing_key.ts";

/** A signing key and the trusted key a node would list for it. */
export async function testKeys(): Promise<
  { signing: SigningKey; trusted: TrustedKey; publicPem: string }
> {
  const g = await generateSigningKey();
  return {
    signing: await loadSigningKey(g.privatePem),
    trusted: await loadTrustedKey(g.publicPem),
    publicPem: g.publicPem,
  };
}

/** Three small slot files whose bytes depend on `version`. */
export function testFiles(version: string): Uint8Array[] {
  return SLOT_FILES.map((n, i) =>
    new TextEncoder().encode(`${n} of ${version} `.repeat(50 + i * 7))
  );
}

/** A whole bundle in memory, and its manifest. */
export async function testBundle(o: {
  key: SigningKey;
  version?: string;
  compatible?: Compatible;
  cmdline?: string;
  files?: Uint8Array[];
  /** Change the manifest after hashing (to lie about a file). */
  edit?: (m: Manifest) => void;
}): Promise<{ bytes: Uint8Array; manifest: Manifest; files: Uint8Array[] }> {
  const version = o.version ?? "2.0.0";
  const files = o.files ?? testFiles(version);
  const manifest: Manifest = {
    format: 1,
    compatible: o.compatible ?? hostCompatible(),
    version,
    cmdline: o.cmdline ?? "console=ttyS0 panic=5",
    files: SLOT_FILES.map((name, i) => ({
      name,
      size: files[i].length,
      sha256: createHash("sha256").update(files[i]).digest("hex"),
    })),
  };
  o.edit?.(manifest);
  const head = encodeBundleHead(await signManifest(manifest, o.key));
  return { bytes: concat([head, ...files]), manifest, files };
}

/** `bytes` as a stream of `size`-byte chunks. */
export async function* chunked(bytes: Uint8Array, size = 1000): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

/** Concatenate byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
