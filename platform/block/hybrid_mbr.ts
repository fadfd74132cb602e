/**
 * Hybrid MBRs: a GPT disk whose LBA 0 lists, besides GPT's 0xEE entry, one
 * or more of its partitions as MBR entries. The Raspberry Pi 3's boot ROM
 * reads only an MBR (it loads bootcode.bin from the FAT partition it
 * lists), while machined-init and the provisioner read the GPT; Linux reads
 * the GPT of a disk whose MBR has a 0xEE entry starting at LBA 1, hybrid or
 * not (block/partitions/efi.c). The Pi image therefore carries a GPT and a
 * hybrid MBR naming its boot FAT, and every later table write must keep that
 * MBR ({@link hybridMbrToKeep}) or the board no longer boots.
 * @module
 */
import type { GptTable, GptWrite } from "./gpt.ts";

/** MBR partition type of FAT32 with LBA addressing. */
export const MBR_TYPE_FAT32_LBA = 0x0c;
/** MBR partition type of GPT's protective entry. */
export const MBR_TYPE_GPT = 0xee;

/** One MBR entry, in sectors. */
export interface MbrEntry {
  type: number;
  firstLba: number;
  sectors: number;
  bootable?: boolean;
}

const TABLE = 446;

/**
 * Sector 0 with `entries` in order (at most four) and the 0x55AA signature.
 * CHS fields hold the "use LBA" marker (0xFE 0xFF 0xFF) every current tool writes.
 * @throws RangeError on more than four entries or a value past 32 bits.
 */
export function encodeMbr(entries: readonly MbrEntry[], diskSignature = 0): Uint8Array {
  if (entries.length > 4) throw new RangeError(`An MBR holds 4 entries, not ${entries.length}`);
  const buf = new Uint8Array(512);
  const v = new DataView(buf.buffer);
  v.setUint32(440, diskSignature >>> 0, true);
  entries.forEach((e, i) => {
    if (e.firstLba > 0xffffffff || e.sectors > 0xffffffff || e.firstLba < 0 || e.sectors < 1) {
      throw new RangeError(`MBR entry ${i + 1} (${e.firstLba}+${e.sectors}) is out of range`);
    }
    const o = TABLE + 16 * i;
    buf.set([e.bootable ? 0x80 : 0, 0xfe, 0xff, 0xff, e.type, 0xfe, 0xff, 0xff], o);
    v.setUint32(o + 8, e.firstLba, true);
    v.setUint32(o + 12, e.sectors, true);
  });
  buf[510] = 0x55;
  buf[511] = 0xaa;
  return buf;
}

/** The non-empty entries of sector 0, or undefined without the 0x55AA signature. */
export function decodeMbr(sector0: Uint8Array): MbrEntry[] | undefined {
  if (sector0.length < 512 || sector0[510] !== 0x55 || sector0[511] !== 0xaa) return undefined;
  const v = new DataView(sector0.buffer, sector0.byteOffset, 512);
  const out: MbrEntry[] = [];
  for (let i = 0; i < 4; i++) {
    const o = TABLE + 16 * i;
    const type = sector0[o + 4];
    const sectors = v.getUint32(o + 12, true);
    if (type === 0 || sectors === 0) continue;
    out.push({ type, firstLba: v.getUint32(o + 8, true), sectors, bootable: sector0[o] === 0x80 });
  }
  return out;
}

/**
 * The hybrid MBR of a GPT disk whose first partition ends before `beforeLba`:
 * `hybrid` (the partitions the MBR-only reader must see, first), then the
 * 0xEE entry over LBA 1 up to `beforeLba` (the GPT header and array, as gdisk
 * writes it), which is what makes Linux read the GPT.
 */
export function hybridMbr(
  hybrid: readonly MbrEntry[],
  beforeLba: number,
  diskSignature = 0,
): Uint8Array {
  return encodeMbr(
    [...hybrid, { type: MBR_TYPE_GPT, firstLba: 1, sectors: beforeLba - 1 }],
    diskSignature,
  );
}

/**
 * Whether `sector0` is a hybrid MBR worth keeping when `table` is written:
 * it has GPT's 0xEE entry at LBA 1 and at least one other entry, and every
 * other entry is exactly a partition of `table` (same first sector and
 * length). Then it is returned, to be written in place of
 * the protective MBR; otherwise undefined (a table that moved or dropped a
 * hybrid partition gets a plain protective MBR: a stale MBR entry would
 * point the Pi's ROM at the wrong sectors).
 */
export function hybridMbrToKeep(
  sector0: Uint8Array,
  table: GptTable,
  sectorSize = 512,
): Uint8Array | undefined {
  const entries = decodeMbr(sector0);
  if (!entries) return undefined;
  const gpt = entries.filter((e) => e.type === MBR_TYPE_GPT);
  const others = entries.filter((e) => e.type !== MBR_TYPE_GPT);
  if (gpt.length !== 1 || gpt[0].firstLba !== 1 || others.length === 0) return undefined;
  // MBR entries count the disk's logical sectors, as GPT's LBAs do.
  const matches = (e: MbrEntry) =>
    table.partitions.some((p) =>
      p.firstLba === e.firstLba && p.lastLba - p.firstLba + 1 === e.sectors
    );
  return others.every(matches) ? sector0.slice(0, sectorSize) : undefined;
}

/**
 * `writes` (encodeGpt's, the protective MBR first at offset 0) with the
 * protective MBR replaced by `sector0` when {@link hybridMbrToKeep} keeps it.
 */
export function keepHybridMbr(
  sector0: Uint8Array,
  table: GptTable,
  writes: GptWrite[],
): GptWrite[] {
  const keep = hybridMbrToKeep(sector0, table, sector0.length);
  if (!keep) return writes;
  return writes.map((w) => w.offset === 0 ? { offset: 0, data: keep } : w);
}
