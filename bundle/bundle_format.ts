/**
 * The upgrade bundle's bytes: a 16-byte magic, the length of the signed
 * manifest (u32 big-endian), the manifest as a JWS compact string, then the
 * slot's files back to back in manifest order, each exactly its manifest
 * size, and nothing after. A reader learns every boundary from the signed
 * manifest before it reads a file byte, so a bundle streams through in
 * chunks and is never held whole.
 */
import { BundleError } from "./errors.ts";

/** The first bytes of every bundle. */
export const BUNDLE_MAGIC = new TextEncoder().encode("MACHINED-BUNDLE1");
/** The largest signed manifest a reader accepts. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

/** The bundle's head: magic, length, manifest JWS. Pure. */
export function encodeBundleHead(jws: string): Uint8Array {
  const body = new TextEncoder().encode(jws);
  if (body.length > MAX_MANIFEST_BYTES) throw new RangeError("the signed manifest is too large");
  const head = new Uint8Array(BUNDLE_MAGIC.length + 4 + body.length);
  head.set(BUNDLE_MAGIC, 0);
  new DataView(head.buffer).setUint32(BUNDLE_MAGIC.length, body.length);
  head.set(body, BUNDLE_MAGIC.length + 4);
  return head;
}

/**
 * Reads exact byte counts from a chunk stream without collecting more than
 * one chunk: `take` for the small head, `pass` to hand a file's bytes on
 * chunk by chunk.
 */
export class ChunkReader {
  #it: AsyncIterator<Uint8Array>;
  #pending: Uint8Array = new Uint8Array(0);
  /** Bytes consumed so far. */
  offset = 0;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#it = source[Symbol.asyncIterator]();
  }

  /** The next `n` bytes, collected (for the head only: n ≤ MAX_MANIFEST_BYTES + 20). */
  async take(n: number, what: string): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let at = 0;
    for await (const c of this.pass(n, what)) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }

  /**
   * The next `n` bytes as chunks (views into the source's chunks).
   * @throws BundleError truncated when the stream ends first.
   */
  async *pass(n: number, what: string): AsyncGenerator<Uint8Array> {
    let left = n;
    while (left > 0) {
      if (this.#pending.length === 0) {
        const r = await this.#it.next();
        if (r.done) {
          throw new BundleError(
            "truncated",
            `the bundle ends at byte ${this.offset}, ${left} bytes into ${what} short`,
          );
        }
        this.#pending = r.value;
        continue;
      }
      const c = this.#pending.subarray(0, Math.min(left, this.#pending.length));
      this.#pending = this.#pending.subarray(c.length);
      left -= c.length;
      this.offset += c.length;
      yield c;
    }
  }

  /** @throws BundleError trailing-bytes when anything follows the last file. */
  async expectEnd(): Promise<void> {
    while (this.#pending.length === 0) {
      const r = await this.#it.next();
      if (r.done) return;
      this.#pending = r.value;
    }
    throw new BundleError("trailing-bytes", `bytes follow the last file at byte ${this.offset}`);
  }
}

/**
 * Read the head of a bundle: check the magic, return the JWS.
 * @throws BundleError bad-magic, bad-manifest (length out of range) or truncated.
 */
export async function readBundleHead(reader: ChunkReader): Promise<string> {
  const magic = await reader.take(BUNDLE_MAGIC.length, "the magic");
  if (!magic.every((b, i) => b === BUNDLE_MAGIC[i])) {
    throw new BundleError("bad-magic", "not a machined bundle (wrong magic)");
  }
  const len = new DataView((await reader.take(4, "the manifest length")).buffer).getUint32(0);
  if (len === 0 || len > MAX_MANIFEST_BYTES) {
    throw new BundleError("bad-manifest", `manifest length ${len} is out of range`);
  }
  return new TextDecoder().decode(await reader.take(len, "the manifest"));
}
