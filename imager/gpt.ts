/**
 * A GUID Partition Table writer: protective MBR, primary header and array at
 * the start of the disk, backup array and header at the end, all CRC32s
 * filled in. The imager writes its own table so that building a disk image
 * needs no root, no loop device and no partitioning tool.
 */
import { crc32 } from "./crc32.ts";

/** Logical block size the table is laid out for. */
export const SECTOR_SIZE = 512;
/** Entries in the partition array (the UEFI minimum array size is 16 KiB). */
export const GPT_ENTRY_COUNT = 128;
/** Bytes per partition entry. */
export const GPT_ENTRY_SIZE = 128;
/** Sectors the partition array occupies (128 × 128 / 512). */
export const GPT_ARRAY_SECTORS = (GPT_ENTRY_COUNT * GPT_ENTRY_SIZE) / SECTOR_SIZE;
/** Partitions start on 1 MiB boundaries, as every modern tool does. */
export const ALIGN_SECTORS = 2048;

/** Partition type of an EFI System Partition. */
export const ESP_TYPE_GUID = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B";

/** One partition to record. LBAs are inclusive, as GPT stores them. */
export interface GptPartition {
  /** Partition type GUID, e.g. {@link ESP_TYPE_GUID}. */
  typeGuid: string;
  /** This partition's own GUID. */
  uniqueGuid: string;
  /** Partition name (at most 36 UTF-16 code units). */
  name: string;
  firstLba: bigint;
  lastLba: bigint;
  /** Attribute bits. @default 0n */
  attributes?: bigint;
}

/** What to write: the disk's size in sectors, its GUID, its partitions. */
export interface GptLayout {
  totalSectors: bigint;
  diskGuid: string;
  partitions: GptPartition[];
}

/** The bytes to write at the start and at the end of the disk. */
export interface GptBytes {
  /** LBA 0 to 33: protective MBR, primary header, primary array. Write at offset 0. */
  head: Uint8Array;
  /** Backup array then backup header (the last 33 sectors). Write at {@link tailOffset}. */
  tail: Uint8Array;
  /** Byte offset of {@link tail}. */
  tailOffset: bigint;
}

/** First LBA a partition may use. */
export function firstUsableLba(): bigint {
  return BigInt(2 + GPT_ARRAY_SECTORS);
}

/** Last LBA a partition may use on a disk of `totalSectors`. */
export function lastUsableLba(totalSectors: bigint): bigint {
  return totalSectors - 2n - BigInt(GPT_ARRAY_SECTORS);
}

/**
 * Lay out the protective MBR, both headers and both arrays.
 * @throws RangeError when the disk is too small, a partition is outside the
 *   usable area, partitions overlap, or there are too many of them.
 */
export function buildGpt(layout: GptLayout): GptBytes {
  const { totalSectors, partitions } = layout;
  if (totalSectors < 2n * BigInt(ALIGN_SECTORS)) {
    throw new RangeError(`Disk of ${totalSectors} sectors is too small for a GPT`);
  }
  if (partitions.length > GPT_ENTRY_COUNT) {
    throw new RangeError(`${partitions.length} partitions exceed ${GPT_ENTRY_COUNT} entries`);
  }
  validatePartitions(partitions, totalSectors);

  const array = new Uint8Array(GPT_ENTRY_COUNT * GPT_ENTRY_SIZE);
  partitions.forEach((p, i) => array.set(encodeEntry(p), i * GPT_ENTRY_SIZE));
  const arrayCrc = crc32(array);
  const lastLba = totalSectors - 1n;
  const backupArrayLba = lastLba - BigInt(GPT_ARRAY_SECTORS);

  const head = new Uint8Array(SECTOR_SIZE * (2 + GPT_ARRAY_SECTORS));
  head.set(protectiveMbr(totalSectors), 0);
  head.set(encodeHeader(layout, 1n, lastLba, 2n, arrayCrc), SECTOR_SIZE);
  head.set(array, 2 * SECTOR_SIZE);

  const tail = new Uint8Array(SECTOR_SIZE * (1 + GPT_ARRAY_SECTORS));
  tail.set(array, 0);
  tail.set(
    encodeHeader(layout, lastLba, 1n, backupArrayLba, arrayCrc),
    GPT_ARRAY_SECTORS * SECTOR_SIZE,
  );
  return { head, tail, tailOffset: backupArrayLba * BigInt(SECTOR_SIZE) };
}

/** Round `lba` up to the next {@link ALIGN_SECTORS} boundary. */
export function alignUp(lba: bigint): bigint {
  const a = BigInt(ALIGN_SECTORS);
  return ((lba + a - 1n) / a) * a;
}

/** Encode a textual GUID in GPT's mixed-endian byte order. */
export function encodeGuid(guid: string): Uint8Array {
  const hex = guid.replaceAll("-", "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`Invalid GUID "${guid}"`);
  const b = Uint8Array.from(hex.match(/../g)!.map((h) => parseInt(h, 16)));
  return Uint8Array.from([
    b[3],
    b[2],
    b[1],
    b[0],
    b[5],
    b[4],
    b[7],
    b[6],
    ...b.subarray(8),
  ]);
}

/** Decode GPT's mixed-endian GUID bytes to the upper-case textual form. */
export function decodeGuid(bytes: Uint8Array): string {
  const b = [
    bytes[3],
    bytes[2],
    bytes[1],
    bytes[0],
    bytes[5],
    bytes[4],
    bytes[7],
    bytes[6],
    ...bytes.subarray(8, 16),
  ];
  const h = b.map((x) => x.toString(16).padStart(2, "0")).join("").toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * A stable version-4-shaped GUID derived from `seed`, so that the same
 * inputs give the same image bytes (a random GUID would break reproducibility).
 */
export async function guidFromSeed(seed: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)),
  );
  const b = digest.slice(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("").toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function validatePartitions(partitions: GptPartition[], totalSectors: bigint): void {
  const first = firstUsableLba();
  const last = lastUsableLba(totalSectors);
  const sorted = [...partitions].sort((a, b) => (a.firstLba < b.firstLba ? -1 : 1));
  sorted.forEach((p, i) => {
    if (p.firstLba < first || p.lastLba > last || p.lastLba < p.firstLba) {
      throw new RangeError(
        `Partition "${p.name}" [${p.firstLba}, ${p.lastLba}] is outside [${first}, ${last}]`,
      );
    }
    const prev = sorted[i - 1];
    if (prev && prev.lastLba >= p.firstLba) {
      throw new RangeError(`Partitions "${prev.name}" and "${p.name}" overlap`);
    }
    if (p.name.length > 36) throw new RangeError(`Partition name "${p.name}" is over 36 chars`);
  });
}

function protectiveMbr(totalSectors: bigint): Uint8Array {
  const mbr = new Uint8Array(SECTOR_SIZE);
  const v = new DataView(mbr.buffer);
  const entry = 446;
  mbr.set([0x00, 0x00, 0x02, 0x00, 0xee, 0xff, 0xff, 0xff], entry);
  v.setUint32(entry + 8, 1, true);
  const size = totalSectors - 1n > 0xffffffffn ? 0xffffffff : Number(totalSectors - 1n);
  v.setUint32(entry + 12, size, true);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  return mbr;
}

function encodeHeader(
  layout: GptLayout,
  myLba: bigint,
  alternateLba: bigint,
  arrayLba: bigint,
  arrayCrc: number,
): Uint8Array {
  const h = new Uint8Array(SECTOR_SIZE);
  const v = new DataView(h.buffer);
  h.set(new TextEncoder().encode("EFI PART"), 0);
  v.setUint32(8, 0x00010000, true);
  v.setUint32(12, 92, true);
  v.setBigUint64(24, myLba, true);
  v.setBigUint64(32, alternateLba, true);
  v.setBigUint64(40, firstUsableLba(), true);
  v.setBigUint64(48, lastUsableLba(layout.totalSectors), true);
  h.set(encodeGuid(layout.diskGuid), 56);
  v.setBigUint64(72, arrayLba, true);
  v.setUint32(80, GPT_ENTRY_COUNT, true);
  v.setUint32(84, GPT_ENTRY_SIZE, true);
  v.setUint32(88, arrayCrc, true);
  v.setUint32(16, crc32(h.subarray(0, 92)), true);
  return h;
}

function encodeEntry(p: GptPartition): Uint8Array {
  const e = new Uint8Array(GPT_ENTRY_SIZE);
  const v = new DataView(e.buffer);
  e.set(encodeGuid(p.typeGuid), 0);
  e.set(encodeGuid(p.uniqueGuid), 16);
  v.setBigUint64(32, p.firstLba, true);
  v.setBigUint64(40, p.lastLba, true);
  v.setBigUint64(48, p.attributes ?? 0n, true);
  for (let i = 0; i < p.name.length; i++) v.setUint16(56 + 2 * i, p.name.charCodeAt(i), true);
  return e;
}
