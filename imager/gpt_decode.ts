/**
 * Reads back a GUID Partition Table and checks its CRCs. The imager uses it to
 * verify the image it has just written, and the tests use it to decode what
 * {@link buildGpt} produced.
 */
import { crc32 } from "./crc32.ts";
import { decodeGuid, SECTOR_SIZE } from "./gpt.ts";
import type { GptPartition } from "./gpt.ts";

/** A decoded GPT header. */
export interface GptHeader {
  myLba: bigint;
  alternateLba: bigint;
  firstUsableLba: bigint;
  lastUsableLba: bigint;
  diskGuid: string;
  arrayLba: bigint;
  entryCount: number;
  entrySize: number;
  arrayCrc: number;
  headerCrc: number;
}

/** A GPT that failed validation: says which check, with the values found. */
export class GptFormatError extends Error {
  override name = "GptFormatError";
}

/**
 * Decode the header in `sector` (512 bytes) and verify its own CRC.
 * @throws GptFormatError on a bad signature, size or CRC.
 */
export function decodeGptHeader(sector: Uint8Array): GptHeader {
  const v = new DataView(sector.buffer, sector.byteOffset, SECTOR_SIZE);
  const sig = new TextDecoder().decode(sector.subarray(0, 8));
  if (sig !== "EFI PART") throw new GptFormatError(`GPT signature is "${sig}"`);
  const size = v.getUint32(12, true);
  if (size !== 92) throw new GptFormatError(`GPT header size is ${size}, expected 92`);
  const copy = sector.slice(0, size);
  new DataView(copy.buffer).setUint32(16, 0, true);
  const headerCrc = v.getUint32(16, true);
  if (crc32(copy) !== headerCrc) {
    throw new GptFormatError(`GPT header CRC ${headerCrc.toString(16)} does not match`);
  }
  return {
    myLba: v.getBigUint64(24, true),
    alternateLba: v.getBigUint64(32, true),
    firstUsableLba: v.getBigUint64(40, true),
    lastUsableLba: v.getBigUint64(48, true),
    diskGuid: decodeGuid(sector.subarray(56, 72)),
    arrayLba: v.getBigUint64(72, true),
    entryCount: v.getUint32(80, true),
    entrySize: v.getUint32(84, true),
    arrayCrc: v.getUint32(88, true),
    headerCrc,
  };
}

/**
 * Decode the non-empty entries of a partition array, verifying its CRC
 * against `header`.
 * @throws GptFormatError when the array CRC does not match.
 */
export function decodeGptArray(array: Uint8Array, header: GptHeader): GptPartition[] {
  const bytes = array.subarray(0, header.entryCount * header.entrySize);
  if (crc32(bytes) !== header.arrayCrc) {
    throw new GptFormatError(`GPT partition array CRC does not match the header's`);
  }
  const out: GptPartition[] = [];
  for (let i = 0; i < header.entryCount; i++) {
    const e = bytes.subarray(i * header.entrySize, (i + 1) * header.entrySize);
    if (e.subarray(0, 16).every((b) => b === 0)) continue;
    const v = new DataView(e.buffer, e.byteOffset, e.byteLength);
    let name = "";
    for (let j = 56; j < 128; j += 2) {
      const c = v.getUint16(j, true);
      if (c === 0) break;
      name += String.fromCharCode(c);
    }
    out.push({
      typeGuid: decodeGuid(e.subarray(0, 16)),
      uniqueGuid: decodeGuid(e.subarray(16, 32)),
      firstLba: v.getBigUint64(32, true),
      lastLba: v.getBigUint64(40, true),
      attributes: v.getBigUint64(48, true),
      name,
    });
  }
  return out;
}

/** Both copies of a disk's GPT, decoded and cross-checked. */
export interface DecodedGpt {
  primary: GptHeader;
  backup: GptHeader;
  partitions: GptPartition[];
}

/**
 * Read and verify the GPT of the disk image at `path`: protective MBR,
 * both headers, both arrays, and that the two copies agree.
 * @throws GptFormatError on any mismatch.
 */
export async function readGpt(path: string): Promise<DecodedGpt> {
  using file = await Deno.open(path, { read: true });
  const size = BigInt((await file.stat()).size);
  const read = async (lba: bigint, sectors: number) => {
    const buf = new Uint8Array(sectors * SECTOR_SIZE);
    await file.seek(lba * BigInt(SECTOR_SIZE), Deno.SeekMode.Start);
    let off = 0;
    while (off < buf.length) {
      const n = await file.read(buf.subarray(off));
      if (n === null) throw new GptFormatError(`Short read at LBA ${lba} of "${path}"`);
      off += n;
    }
    return buf;
  };
  const mbr = await read(0n, 1);
  if (mbr[510] !== 0x55 || mbr[511] !== 0xaa || mbr[450] !== 0xee) {
    throw new GptFormatError(`"${path}" has no protective MBR`);
  }
  const primary = decodeGptHeader(await read(1n, 1));
  const arraySectors = Math.ceil((primary.entryCount * primary.entrySize) / SECTOR_SIZE);
  const partitions = decodeGptArray(await read(primary.arrayLba, arraySectors), primary);
  const lastLba = size / BigInt(SECTOR_SIZE) - 1n;
  if (primary.alternateLba !== lastLba) {
    throw new GptFormatError(`Backup header at ${primary.alternateLba}, disk ends at ${lastLba}`);
  }
  const backup = decodeGptHeader(await read(lastLba, 1));
  const backupParts = decodeGptArray(await read(backup.arrayLba, arraySectors), backup);
  if (backup.arrayCrc !== primary.arrayCrc || backupParts.length !== partitions.length) {
    throw new GptFormatError(`Primary and backup partition arrays differ in "${path}"`);
  }
  return { primary, backup, partitions };
}
