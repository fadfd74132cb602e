/**
 * A dm-verity hash tree (format version 1, sha256, 4096-byte data and hash
 * blocks, no superblock) for the slot's root image, appended to the image
 * itself: machined-init then maps the image through dm-verity and the kernel
 * checks each block as it is first read, instead of machined-init hashing the
 * whole file before the mount (docs/decisions.md "The root image is verified
 * by dm-verity"). The table carries every parameter, so no superblock is
 * written: `machined.root.verity=<root>,<salt>,<data blocks>` on the loader
 * entry, the tree starting at block `<data blocks>` of the same file.
 */
import { createHash } from "node:crypto";

/** dm-verity's data and hash block size here. */
export const VERITY_BLOCK = 4096;
const DIGEST = 32;
const PER_BLOCK = VERITY_BLOCK / DIGEST;

/** What the kernel's verity table needs besides the device. */
export interface VerityParams {
  /** Lowercase hex sha256 of the top hash block (or of the only data block). */
  rootHash: string;
  /** Lowercase hex salt, prepended to every hashed block (format 1). */
  salt: string;
  /** 4096-byte blocks of (zero-padded) data; the tree starts at this block. */
  dataBlocks: number;
}

/** A tree and its parameters; `tree` goes right after the padded data. */
export interface VerityTree extends VerityParams {
  tree: Uint8Array;
}

function digest(salt: Uint8Array, block: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(salt).update(block).digest());
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** Hash blocks of one level: the digests of `blocks`, 128 to a zero-padded block. */
function level(salt: Uint8Array, blocks: Uint8Array, count: number): Uint8Array {
  const out = new Uint8Array(Math.ceil(count / PER_BLOCK) * VERITY_BLOCK);
  for (let i = 0; i < count; i++) {
    out.set(digest(salt, blocks.subarray(i * VERITY_BLOCK, (i + 1) * VERITY_BLOCK)), i * DIGEST);
  }
  return out;
}

/**
 * The tree over `data` (a whole number of 4096-byte blocks, at least one)
 * as dm-verity lays it out: the level nearest the root first, the leaves'
 * level last; one data block has no tree and its own digest is the root.
 * Pure.
 * @throws RangeError when `data` is empty or not block-aligned.
 */
export function verityTree(data: Uint8Array, salt: Uint8Array): VerityTree {
  if (data.length === 0 || data.length % VERITY_BLOCK !== 0) {
    throw new RangeError(
      `dm-verity data must be a whole number of ${VERITY_BLOCK}-byte blocks, got ${data.length} bytes`,
    );
  }
  const dataBlocks = data.length / VERITY_BLOCK;
  const levels: Uint8Array[] = [];
  let below = data;
  let count = dataBlocks;
  while (count > 1) {
    const l = level(salt, below, count);
    levels.unshift(l);
    below = l;
    count = l.length / VERITY_BLOCK;
  }
  const tree = new Uint8Array(levels.reduce((n, l) => n + l.length, 0));
  let at = 0;
  for (const l of levels) {
    tree.set(l, at);
    at += l.length;
  }
  return {
    tree,
    rootHash: hex(digest(salt, below.subarray(0, VERITY_BLOCK))),
    salt: hex(salt),
    dataBlocks,
  };
}

/** `data` zero-padded to the next 4096-byte boundary (itself when aligned). Pure. */
export function padToBlock(data: Uint8Array): Uint8Array {
  const rem = data.length % VERITY_BLOCK;
  if (rem === 0) return data;
  const out = new Uint8Array(data.length + VERITY_BLOCK - rem);
  out.set(data);
  return out;
}

/**
 * The salt: sha256 over a label and the padded data, so it looks random, is
 * different for every image and is the same for the same image (the build
 * stays byte-reproducible). Pure.
 */
export function veritySalt(padded: Uint8Array): Uint8Array {
  return new Uint8Array(
    createHash("sha256").update("machined dm-verity salt v1\0").update(padded).digest(),
  );
}

/**
 * Pads the image file at `path` to a block and appends its tree in place.
 * The whole image is held in memory (about 80 MiB for the node's root).
 */
export async function appendVerityTree(path: string): Promise<VerityParams> {
  const padded = padToBlock(await Deno.readFile(path));
  const t = verityTree(padded, veritySalt(padded));
  const out = new Uint8Array(padded.length + t.tree.length);
  out.set(padded);
  out.set(t.tree, padded.length);
  await Deno.writeFile(path, out);
  return { rootHash: t.rootHash, salt: t.salt, dataBlocks: t.dataBlocks };
}
