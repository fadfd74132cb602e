/**
 * Filesystem identification by superblock, as pure functions over the first
 * {@link PROBE_BYTES} of a device or partition: ext2/3/4, XFS, FAT (vfat),
 * ISO9660 (a NoCloud `CIDATA` drive made with genisoimage or cloud-localds),
 * Linux swap and a LUKS2 header (`crypto_LUKS`, an encrypted volume: not a
 * filesystem, but what blkid reports), with label and UUID formatted as
 * blkid prints them.
 * @module
 */

/** How many leading bytes {@link probeSuperblock} needs (covers 64 KiB swap pages). */
export const PROBE_BYTES = 65536;

/** What a superblock says. */
export interface FsInfo {
  type: "ext2" | "ext3" | "ext4" | "xfs" | "vfat" | "iso9660" | "swap" | "crypto_LUKS";
  /** Empty when the filesystem has no label. */
  label: string;
  /** Lowercase 8-4-4-4-12 (ext, xfs, swap), `XXXX-XXXX` (vfat) or the volume's date (iso9660). */
  uuid: string;
}

const ascii = (b: Uint8Array) => new TextDecoder("latin1").decode(b);

function cstr(b: Uint8Array): string {
  const end = b.indexOf(0);
  return new TextDecoder().decode(end < 0 ? b : b.subarray(0, end));
}

function uuidText(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function ext(head: Uint8Array): FsInfo | undefined {
  if (head.length < 2048) return undefined;
  const sb = head.subarray(1024, 2048);
  const v = new DataView(sb.buffer, sb.byteOffset, sb.byteLength);
  if (v.getUint16(56, true) !== 0xef53) return undefined;
  const compat = v.getUint32(92, true), incompat = v.getUint32(96, true);
  const EXTENTS = 0x40, BIT64 = 0x80, FLEX_BG = 0x200, JOURNAL = 0x4;
  const type = incompat & (EXTENTS | BIT64 | FLEX_BG) ? "ext4" : compat & JOURNAL ? "ext3" : "ext2";
  return { type, label: cstr(sb.subarray(120, 136)), uuid: uuidText(sb.subarray(104, 120)) };
}

function xfs(head: Uint8Array): FsInfo | undefined {
  if (head.length < 512 || ascii(head.subarray(0, 4)) !== "XFSB") return undefined;
  return {
    type: "xfs",
    label: cstr(head.subarray(108, 120)),
    uuid: uuidText(head.subarray(32, 48)),
  };
}

function swap(head: Uint8Array): FsInfo | undefined {
  for (const page of [4096, 8192, 16384, 65536]) {
    if (head.length < page) break;
    const magic = ascii(head.subarray(page - 10, page));
    if (magic !== "SWAPSPACE2" && magic !== "SWAP-SPACE") continue;
    if (magic === "SWAP-SPACE") return { type: "swap", label: "", uuid: "" };
    return {
      type: "swap",
      label: cstr(head.subarray(1024 + 28, 1024 + 44)),
      uuid: uuidText(head.subarray(1024 + 12, 1024 + 28)),
    };
  }
  return undefined;
}

function vfat(head: Uint8Array): FsInfo | undefined {
  if (head.length < 512 || head[510] !== 0x55 || head[511] !== 0xaa) return undefined;
  const v = new DataView(head.buffer, head.byteOffset, 512);
  const bps = v.getUint16(11, true);
  if (bps < 512 || bps > 4096 || bps & (bps - 1) || head[13] === 0) return undefined;
  let idOff: number, labelOff: number;
  if (ascii(head.subarray(82, 87)) === "FAT32") [idOff, labelOff] = [67, 71];
  else if (ascii(head.subarray(54, 57)) === "FAT") [idOff, labelOff] = [39, 43];
  else return undefined;
  const id = v.getUint32(idOff, true);
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, "0");
  const raw = ascii(head.subarray(labelOff, labelOff + 11)).trimEnd();
  return {
    type: "vfat",
    label: raw === "NO NAME" ? "" : raw,
    uuid: `${hex(id >>> 16)}-${hex(id & 0xffff)}`,
  };
}

/** The primary volume descriptor sits at 32 KiB (sector 16 of 2048 bytes). */
const ISO_PVD = 32768;

function iso9660(head: Uint8Array): FsInfo | undefined {
  if (head.length < ISO_PVD + 2048) return undefined;
  const pvd = head.subarray(ISO_PVD, ISO_PVD + 2048);
  if (pvd[0] !== 1 || ascii(pvd.subarray(1, 6)) !== "CD001") return undefined;
  // blkid's UUID is the modification date (else the creation date), digits grouped.
  const date = [830, 813].map((o) => ascii(pvd.subarray(o, o + 16)))
    .find((d) => /^\d{16}$/.test(d) && d !== "0000000000000000");
  const uuid = date
    ? [0, 4, 6, 8, 10, 12, 14].map((i, n, a) => date.slice(i, a[n + 1] ?? 16)).join("-")
    : "";
  return { type: "iso9660", label: ascii(pvd.subarray(40, 72)).trimEnd(), uuid };
}

/** "LUKS\xba\xbe", then a big-endian version; LUKS1 is not one machined makes. */
const LUKS_MAGIC = [0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe];

function luks2(head: Uint8Array): FsInfo | undefined {
  if (head.length < 512 || !LUKS_MAGIC.every((b, i) => head[i] === b)) return undefined;
  if (((head[6] << 8) | head[7]) !== 2) return undefined;
  // LUKS2 binary header: label at 24 (48 bytes), UUID as text at 168 (40 bytes).
  return {
    type: "crypto_LUKS",
    label: cstr(head.subarray(24, 72)),
    uuid: cstr(head.subarray(168, 208)),
  };
}

/** Identify the filesystem whose first bytes are `head`; undefined when unknown. */
export function probeSuperblock(head: Uint8Array): FsInfo | undefined {
  return luks2(head) ?? xfs(head) ?? ext(head) ?? swap(head) ?? vfat(head) ?? iso9660(head);
}
