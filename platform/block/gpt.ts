/**
 * GUID Partition Table encode/decode as pure functions over bytes, so the
 * disk provisioner (on a device) and the imager (on an image file in
 * userspace) share one implementation. Writes the protective MBR, the primary
 * header and entry array at LBA 1.., and the backup entry array and header at
 * the end of the disk, with both CRC32s (UEFI spec 2.10 §5.3).
 *
 * @example
 * ```ts
 * const image = new Uint8Array(8 << 20);
 * const writes = encodeGpt({ diskGuid: randomGuid(), partitions: [{
 *   number: 1, type: GPT_TYPE.LINUX_FILESYSTEM, uuid: randomGuid(),
 *   firstLba: 2048, lastLba: 16383, name: "STATE", attributes: 0n }] }, image.length, 512);
 * applyWrites(image, writes);
 * const read = await readGpt(imageReader(image), image.length, 512);
 * ```
 * @module
 */
import { crc32 } from "./crc32.ts";
import { bytesToGuid, guidToBytes } from "./guid.ts";

export { bytesToGuid, guidToBytes, randomGuid } from "./guid.ts";

/** Well-known partition type GUIDs. */
export const GPT_TYPE = {
  EFI_SYSTEM: "c12a7328-f81f-11d2-ba4b-00a0c93ec93b",
  BIOS_BOOT: "21686148-6449-6e6f-744e-656564454649",
  LINUX_FILESYSTEM: "0fc63daf-8483-4772-8e79-3d69d8477de4",
  LINUX_SWAP: "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f",
  LINUX_LVM: "e6d6d379-f507-44c2-a23c-238f2a3df928",
  MICROSOFT_BASIC_DATA: "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7",
} as const;

/** Attribute bits. */
export const GPT_ATTR = {
  REQUIRED: 1n << 0n,
  NO_BLOCK_IO: 1n << 1n,
  LEGACY_BIOS_BOOTABLE: 1n << 2n,
} as const;

/** One partition entry. */
export interface GptPartition {
  /** 1-based slot in the entry array (the kernel's partition number). */
  number: number;
  /** Partition type GUID, lowercase. */
  type: string;
  /** Unique partition GUID, lowercase. */
  uuid: string;
  firstLba: number;
  /** Inclusive. */
  lastLba: number;
  /** Up to 36 UTF-16 code units. */
  name: string;
  attributes: bigint;
}

/** A partition table. */
export interface GptTable {
  diskGuid: string;
  partitions: GptPartition[];
}

/** Where things live on a disk of a given size. */
export interface GptGeometry {
  sectorSize: number;
  lastLba: number;
  entryCount: number;
  entrySize: number;
  entrySectors: number;
  firstUsableLba: number;
  lastUsableLba: number;
}

/** A table read back, with the health of each copy. */
export interface GptReadResult {
  table: GptTable;
  geometry: GptGeometry;
  primaryValid: boolean;
  backupValid: boolean;
}

/** A byte range to write. */
export interface GptWrite {
  offset: number;
  data: Uint8Array;
}

/** Reads `length` bytes at `offset`. */
export type Reader = (offset: number, length: number) => Promise<Uint8Array> | Uint8Array;

const SIGNATURE = "EFI PART";
const HEADER_SIZE = 92;
const ENTRY_SIZE = 128;
const ENTRY_COUNT = 128;

/** Compute the layout for `diskSize` bytes. @throws RangeError when too small. */
export function gptGeometry(diskSize: number, sectorSize: number): GptGeometry {
  if (sectorSize < 512 || sectorSize & (sectorSize - 1)) {
    throw new RangeError(`Bad sector size ${sectorSize}`);
  }
  const sectors = Math.floor(diskSize / sectorSize);
  const entrySectors = Math.ceil((ENTRY_COUNT * ENTRY_SIZE) / sectorSize);
  const lastLba = sectors - 1;
  const g = {
    sectorSize,
    lastLba,
    entryCount: ENTRY_COUNT,
    entrySize: ENTRY_SIZE,
    entrySectors,
    firstUsableLba: 2 + entrySectors,
    lastUsableLba: lastLba - 1 - entrySectors,
  };
  if (g.lastUsableLba < g.firstUsableLba) {
    throw new RangeError(`Disk of ${diskSize} bytes is too small for a GPT`);
  }
  return g;
}

function checkPartitions(parts: GptPartition[], g: GptGeometry): void {
  const sorted = [...parts].sort((a, b) => a.firstLba - b.firstLba);
  const numbers = new Set<number>();
  for (const [i, p] of sorted.entries()) {
    const what = `partition ${p.number} (${p.name})`;
    if (!Number.isInteger(p.number) || p.number < 1 || p.number > g.entryCount) {
      throw new RangeError(`${what}: number must be 1..${g.entryCount}`);
    }
    if (numbers.has(p.number)) throw new RangeError(`${what}: duplicate number`);
    numbers.add(p.number);
    if (p.firstLba < g.firstUsableLba || p.lastLba > g.lastUsableLba || p.lastLba < p.firstLba) {
      throw new RangeError(
        `${what}: LBAs ${p.firstLba}..${p.lastLba} outside ${g.firstUsableLba}..${g.lastUsableLba}`,
      );
    }
    if (i > 0 && sorted[i - 1].lastLba >= p.firstLba) {
      throw new RangeError(`${what} overlaps partition ${sorted[i - 1].number}`);
    }
    if (p.name.length > 36) throw new RangeError(`${what}: name longer than 36 UTF-16 units`);
  }
}

function encodeEntries(parts: GptPartition[], g: GptGeometry): Uint8Array {
  const buf = new Uint8Array(g.entrySectors * g.sectorSize);
  const v = new DataView(buf.buffer);
  for (const p of parts) {
    const o = (p.number - 1) * g.entrySize;
    buf.set(guidToBytes(p.type), o);
    buf.set(guidToBytes(p.uuid), o + 16);
    v.setBigUint64(o + 32, BigInt(p.firstLba), true);
    v.setBigUint64(o + 40, BigInt(p.lastLba), true);
    v.setBigUint64(o + 48, p.attributes, true);
    for (let i = 0; i < p.name.length; i++) v.setUint16(o + 56 + 2 * i, p.name.charCodeAt(i), true);
  }
  return buf;
}

function encodeHeader(
  g: GptGeometry,
  diskGuid: string,
  myLba: number,
  altLba: number,
  entriesLba: number,
  entriesCrc: number,
): Uint8Array {
  const buf = new Uint8Array(g.sectorSize);
  const v = new DataView(buf.buffer);
  buf.set(new TextEncoder().encode(SIGNATURE), 0);
  v.setUint32(8, 0x00010000, true);
  v.setUint32(12, HEADER_SIZE, true);
  v.setBigUint64(24, BigInt(myLba), true);
  v.setBigUint64(32, BigInt(altLba), true);
  v.setBigUint64(40, BigInt(g.firstUsableLba), true);
  v.setBigUint64(48, BigInt(g.lastUsableLba), true);
  buf.set(guidToBytes(diskGuid), 56);
  v.setBigUint64(72, BigInt(entriesLba), true);
  v.setUint32(80, g.entryCount, true);
  v.setUint32(84, g.entrySize, true);
  v.setUint32(88, entriesCrc, true);
  v.setUint32(16, crc32(buf.subarray(0, HEADER_SIZE)), true);
  return buf;
}

/** The protective MBR: one 0xEE partition covering the disk (capped at 2^32-1). */
export function protectiveMbr(g: GptGeometry): Uint8Array {
  const buf = new Uint8Array(g.sectorSize);
  const v = new DataView(buf.buffer);
  const e = 446;
  buf.set([0x00, 0x00, 0x02, 0x00, 0xee, 0xff, 0xff, 0xff], e);
  v.setUint32(e + 8, 1, true);
  v.setUint32(e + 12, Math.min(g.lastLba, 0xffffffff), true);
  buf[510] = 0x55;
  buf[511] = 0xaa;
  return buf;
}

/**
 * Encode `table` for a disk of `diskSize` bytes: the writes that lay down the
 * protective MBR and both GPT copies.
 * @throws RangeError on overlapping, out-of-range or duplicate partitions.
 */
export function encodeGpt(table: GptTable, diskSize: number, sectorSize: number): GptWrite[] {
  const g = gptGeometry(diskSize, sectorSize);
  checkPartitions(table.partitions, g);
  const entries = encodeEntries(table.partitions, g);
  const ecrc = crc32(entries.subarray(0, g.entryCount * g.entrySize));
  const backupEntriesLba = g.lastUsableLba + 1;
  const s = sectorSize;
  return [
    { offset: 0, data: protectiveMbr(g) },
    { offset: s, data: encodeHeader(g, table.diskGuid, 1, g.lastLba, 2, ecrc) },
    { offset: 2 * s, data: entries },
    { offset: backupEntriesLba * s, data: entries },
    {
      offset: g.lastLba * s,
      data: encodeHeader(g, table.diskGuid, g.lastLba, 1, backupEntriesLba, ecrc),
    },
  ];
}

/** A decoded GPT header (primary or backup copy), as {@link verifyGpt} returns it. */
export interface GptHeader {
  /** LBA of this header. */
  myLba: number;
  /** LBA of the other copy's header. */
  altLba: number;
  firstUsable: number;
  lastUsable: number;
  diskGuid: string;
  /** LBA of this copy's entry array. */
  entriesLba: number;
  /** Number of entries in the array. */
  count: number;
  /** Bytes per entry. */
  size: number;
  /** CRC-32 of the entry array. */
  entriesCrc: number;
}

function parseHeader(buf: Uint8Array, lba: number): GptHeader | undefined {
  if (new TextDecoder().decode(buf.subarray(0, 8)) !== SIGNATURE) return undefined;
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const size = v.getUint32(12, true);
  if (size < HEADER_SIZE || size > buf.length) return undefined;
  const copy = buf.slice(0, size);
  new DataView(copy.buffer).setUint32(16, 0, true);
  if (crc32(copy) !== v.getUint32(16, true)) return undefined;
  const h = {
    myLba: Number(v.getBigUint64(24, true)),
    altLba: Number(v.getBigUint64(32, true)),
    firstUsable: Number(v.getBigUint64(40, true)),
    lastUsable: Number(v.getBigUint64(48, true)),
    diskGuid: bytesToGuid(buf.subarray(56, 72)),
    entriesLba: Number(v.getBigUint64(72, true)),
    count: v.getUint32(80, true),
    size: v.getUint32(84, true),
    entriesCrc: v.getUint32(88, true),
  };
  if (h.myLba !== lba || h.size < 128 || h.size % 8 !== 0 || h.count > 65536) return undefined;
  return h;
}

async function readCopy(read: Reader, lba: number, s: number) {
  const h = parseHeader(await read(lba * s, s), lba);
  if (!h) return undefined;
  const entries = await read(h.entriesLba * s, h.count * h.size);
  if (crc32(entries) !== h.entriesCrc) return undefined;
  return { h, entries };
}

function decodeEntries(entries: Uint8Array, h: GptHeader): GptPartition[] {
  const v = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
  const out: GptPartition[] = [];
  for (let i = 0; i < h.count; i++) {
    const o = i * h.size;
    const type = bytesToGuid(entries.subarray(o, o + 16));
    if (type === "00000000-0000-0000-0000-000000000000") continue;
    let name = "";
    for (let j = 0; j < 36; j++) {
      const c = v.getUint16(o + 56 + 2 * j, true);
      if (c === 0) break;
      name += String.fromCharCode(c);
    }
    out.push({
      number: i + 1,
      type,
      uuid: bytesToGuid(entries.subarray(o + 16, o + 32)),
      firstLba: Number(v.getBigUint64(o + 32, true)),
      lastLba: Number(v.getBigUint64(o + 40, true)),
      attributes: v.getBigUint64(o + 48, true),
      name,
    });
  }
  return out;
}

/**
 * Read the GPT of a disk of `diskSize` bytes through `read`. Falls back to the
 * backup copy when the primary is damaged; undefined when neither is valid.
 */
export async function readGpt(
  read: Reader,
  diskSize: number,
  sectorSize: number,
): Promise<GptReadResult | undefined> {
  const g = gptGeometry(diskSize, sectorSize);
  const primary = await readCopy(read, 1, sectorSize);
  const backupLba = primary?.h.altLba ?? g.lastLba;
  const backup = backupLba * sectorSize < diskSize
    ? await readCopy(read, backupLba, sectorSize)
    : undefined;
  const use = primary ?? backup;
  if (!use) return undefined;
  return {
    table: { diskGuid: use.h.diskGuid, partitions: decodeEntries(use.entries, use.h) },
    geometry: {
      ...g,
      entryCount: use.h.count,
      entrySize: use.h.size,
      firstUsableLba: use.h.firstUsable,
      lastUsableLba: use.h.lastUsable,
    },
    primaryValid: primary !== undefined,
    backupValid: backup !== undefined,
  };
}

/** Which check {@link verifyGpt} failed. */
export type GptCheck =
  | "protective-mbr"
  | "primary"
  | "backup"
  | "backup-location"
  | "copies-differ";

/** A GPT that is not exactly what a freshly written table must be. */
export class GptVerifyError extends Error {
  override name = "GptVerifyError";
  constructor(
    /** The check that failed. */
    readonly check: GptCheck,
    /** What was found, with the values. */
    readonly detail: string,
  ) {
    super(`GPT check "${check}" failed: ${detail}`);
  }
}

/** A table that passed {@link verifyGpt}, with both headers. */
export interface GptVerified {
  table: GptTable;
  geometry: GptGeometry;
  primary: GptHeader;
  backup: GptHeader;
}

/**
 * Read the GPT of a disk of `diskSize` bytes strictly: a protective MBR, a
 * valid primary and a valid backup copy (header and entry CRCs), the backup
 * header on the last LBA pointing back at LBA 1, and both copies agreeing.
 * Unlike {@link readGpt}, which tolerates a damaged copy on a live disk, this
 * is for checking a table just written (the imager verifies every image with
 * it), where falling back to the backup would hide a bug.
 * @throws GptVerifyError naming the first check that failed.
 */
export async function verifyGpt(
  read: Reader,
  diskSize: number,
  sectorSize: number,
): Promise<GptVerified> {
  const g = gptGeometry(diskSize, sectorSize);
  const mbr = await read(0, sectorSize);
  if (mbr[510] !== 0x55 || mbr[511] !== 0xaa || mbr[446 + 4] !== 0xee) {
    throw new GptVerifyError("protective-mbr", "no 0x55AA signature with a 0xEE entry at LBA 0");
  }
  const primary = await readCopy(read, 1, sectorSize);
  if (!primary) {
    throw new GptVerifyError("primary", "bad signature, header CRC or entry array CRC at LBA 1");
  }
  if (primary.h.altLba !== g.lastLba) {
    throw new GptVerifyError(
      "backup-location",
      `primary points at a backup on LBA ${primary.h.altLba}, the disk ends at LBA ${g.lastLba}`,
    );
  }
  const backup = await readCopy(read, g.lastLba, sectorSize);
  if (!backup) {
    throw new GptVerifyError(
      "backup",
      `bad signature, header CRC or entry array CRC at LBA ${g.lastLba}`,
    );
  }
  const fields = ["firstUsable", "lastUsable", "diskGuid", "count", "size", "entriesCrc"] as const;
  const differs: string[] = fields.filter((k) => primary.h[k] !== backup.h[k]);
  if (backup.h.altLba !== 1) differs.push(`altLba (backup points at LBA ${backup.h.altLba})`);
  if (differs.length > 0 || !sameBytes(primary.entries, backup.entries)) {
    throw new GptVerifyError(
      "copies-differ",
      `primary and backup differ in ${differs.length ? differs.join(", ") : "entry bytes"}`,
    );
  }
  return {
    table: { diskGuid: primary.h.diskGuid, partitions: decodeEntries(primary.entries, primary.h) },
    geometry: {
      ...g,
      entryCount: primary.h.count,
      entrySize: primary.h.size,
      firstUsableLba: primary.h.firstUsable,
      lastUsableLba: primary.h.lastUsable,
    },
    primary: primary.h,
    backup: backup.h,
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Apply writes to an in-memory image. */
export function applyWrites(image: Uint8Array, writes: readonly GptWrite[]): void {
  for (const w of writes) image.set(w.data, w.offset);
}

/** A {@link Reader} over an in-memory image. */
export function imageReader(image: Uint8Array): Reader {
  return (offset, length) => image.slice(offset, offset + length);
}
