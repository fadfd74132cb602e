/**
 * Stream-read a bundle: verify its signed manifest (manifest.ts) before any
 * file byte is passed on, then hand each file to a sink chunk by chunk while
 * hashing it, and refuse a file whose size or SHA-256 differs from the
 * manifest. Memory stays at one chunk whatever the bundle's size.
 */
import { createHash } from "node:crypto";
import { ChunkReader, readBundleHead } from "./bundle_format.ts";
import { BundleError } from "./errors.ts";
import { type Compatible, type Manifest, verifyManifest } from "./manifest.ts";
import type { TrustedKey } from "./signing_key.ts";

/** One file of the manifest. */
export type ManifestFile = Manifest["files"][number];

/** Where {@link readBundle} sends a verified manifest and the files' bytes. */
export interface BundleSink {
  /** The manifest verified; return to start receiving files. */
  verified(manifest: Manifest, kid: string): Promise<void>;
  /** Consume all of `chunks` (file `file`'s bytes, still unchecked). */
  file(file: ManifestFile, chunks: AsyncIterable<Uint8Array>): Promise<void>;
  /** `file` was received whole and its SHA-256 matched. */
  fileChecked?(file: ManifestFile): Promise<void>;
}

/** Progress callbacks: bytes received so far of the total. */
export type ReceiveProgress = (received: number, total: number) => void;

/** A bundle whose head (magic, signed manifest) is read and verified; no file byte read yet. */
export interface OpenedBundle {
  manifest: Manifest;
  kid: string;
  /** The whole bundle's size in bytes as its head promises (head and files). */
  size: number;
  /**
   * Stream the files into `sink` (its `verified` is not called again) and
   * check the end of the bundle.
   * @throws BundleError file-mismatch, truncated, trailing-bytes.
   */
  receive(
    sink: Pick<BundleSink, "file" | "fileChecked">,
    onProgress?: ReceiveProgress,
  ): Promise<void>;
}

/**
 * Read and verify a bundle's head only, so a caller decides (floor, plan)
 * before it opens anything for writing.
 * @throws BundleError bad-magic, bad-manifest, wrong-algorithm, unknown-key,
 *   bad-signature, wrong-compatible, truncated.
 */
export async function openBundle(
  source: AsyncIterable<Uint8Array>,
  trust: { keys: readonly TrustedKey[]; machine: Compatible },
): Promise<OpenedBundle> {
  const reader = new ChunkReader(source);
  const jws = await readBundleHead(reader);
  const { manifest, kid } = await verifyManifest(jws, trust.keys, trust.machine);
  const size = reader.offset + manifest.files.reduce((n, f) => n + f.size, 0);
  return {
    manifest,
    kid,
    size,
    receive: (sink, onProgress) => receiveFiles(reader, manifest, sink, onProgress),
  };
}

/**
 * Read, verify and deliver a bundle.
 * @throws BundleError for every refusal (see errors.ts); the sink's own errors pass through.
 */
export async function readBundle(
  source: AsyncIterable<Uint8Array>,
  trust: { keys: readonly TrustedKey[]; machine: Compatible },
  sink: BundleSink,
  onProgress?: ReceiveProgress,
): Promise<Manifest> {
  const opened = await openBundle(source, trust);
  await sink.verified(opened.manifest, opened.kid);
  await opened.receive(sink, onProgress);
  return opened.manifest;
}

async function receiveFiles(
  reader: ChunkReader,
  manifest: Manifest,
  sink: Pick<BundleSink, "file" | "fileChecked">,
  onProgress?: ReceiveProgress,
): Promise<void> {
  const total = reader.offset + manifest.files.reduce((n, f) => n + f.size, 0);
  for (const file of manifest.files) {
    const hash = createHash("sha256");
    const counted = async function* () {
      for await (const c of reader.pass(file.size, file.name)) {
        hash.update(c);
        onProgress?.(reader.offset, total);
        yield c;
      }
    };
    const it = counted();
    await sink.file(file, it);
    for await (const _ of it) { /* a sink that stopped early: drain, still hashed */ }
    const got = hash.digest("hex");
    if (got !== file.sha256) {
      throw new BundleError(
        "file-mismatch",
        `${file.name}: sha256 ${got.slice(0, 12)}… is not the manifest's ${
          file.sha256.slice(0, 12)
        }…`,
      );
    }
    await sink.fileChecked?.(file);
  }
  await reader.expectEnd();
}
