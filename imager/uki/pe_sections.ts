/**
 * Appending sections to a PE/COFF image, as a Unified Kernel Image is made
 * from systemd's EFI stub (systemd-stub(7): `.osrel`, `.cmdline`, `.uname`,
 * `.initrd`, `.linux`). Bookworm has no ukify, and objcopy's PE support
 * differs between architectures, so the imager writes the sections itself:
 * each new section header goes into the slack between the section table and
 * `SizeOfHeaders`, its bytes at the end of the file (aligned to
 * `FileAlignment`) and its address after the image's last (aligned to
 * `SectionAlignment` and to a page); `NumberOfSections`, `SizeOfImage`,
 * `SizeOfInitializedData` and the checksum are updated. Pure, byte for byte
 * reproducible.
 * @module
 */

/** A section to add: name (at most 8 bytes) and contents. */
export interface NewSection {
  name: string;
  data: Uint8Array;
}

/** One section header of a PE image, as read. */
export interface PeSection {
  name: string;
  virtualSize: number;
  virtualAddress: number;
  rawSize: number;
  rawOffset: number;
}

/** The fields of a PE32+ image that appending sections reads or changes. */
export interface PeLayout {
  /** File offset of the COFF header (after "PE\0\0"). */
  coff: number;
  /** File offset of the optional header. */
  optional: number;
  /** File offset of the first section header. */
  sectionTable: number;
  sectionAlignment: number;
  fileAlignment: number;
  sizeOfHeaders: number;
  sections: PeSection[];
}

/** A PE image this module cannot extend: what is wrong with it. */
export class PeFormatError extends Error {
  override name = "PeFormatError";
}

const SECTION_HEADER = 40;
/** IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ. */
const READ_ONLY_DATA = 0x40000040;
const PAGE = 4096;

/**
 * Read the layout of a PE32+ image.
 * @throws PeFormatError when it is not one.
 */
export function readPeLayout(pe: Uint8Array): PeLayout {
  const v = view(pe);
  if (pe.length < 0x40 || v.getUint16(0, true) !== 0x5a4d) throw new PeFormatError("no MZ header");
  const peAt = v.getUint32(0x3c, true);
  if (peAt + 24 > pe.length || v.getUint32(peAt, true) !== 0x00004550) {
    throw new PeFormatError("no PE signature");
  }
  const coff = peAt + 4;
  const count = v.getUint16(coff + 2, true);
  const optionalSize = v.getUint16(coff + 16, true);
  const optional = coff + 20;
  if (v.getUint16(optional, true) !== 0x20b) throw new PeFormatError("not PE32+");
  const sectionTable = optional + optionalSize;
  if (sectionTable + count * SECTION_HEADER > pe.length) {
    throw new PeFormatError("section table past the end");
  }
  const sections: PeSection[] = [];
  for (let i = 0; i < count; i++) {
    const at = sectionTable + i * SECTION_HEADER;
    sections.push({
      name: new TextDecoder().decode(pe.subarray(at, at + 8)).replace(/\0+$/, ""),
      virtualSize: v.getUint32(at + 8, true),
      virtualAddress: v.getUint32(at + 12, true),
      rawSize: v.getUint32(at + 16, true),
      rawOffset: v.getUint32(at + 20, true),
    });
  }
  return {
    coff,
    optional,
    sectionTable,
    sectionAlignment: v.getUint32(optional + 32, true),
    fileAlignment: v.getUint32(optional + 36, true),
    sizeOfHeaders: v.getUint32(optional + 60, true),
    sections,
  };
}

/**
 * `pe` with `sections` appended, in order.
 * @throws PeFormatError when the image is not PE32+, is already signed (its
 *   certificate table would no longer cover it), has no room for the
 *   headers, or already has a section of one of the names.
 */
export function appendSections(pe: Uint8Array, sections: NewSection[]): Uint8Array {
  const layout = readPeLayout(pe);
  checkAppendable(pe, layout, sections);
  const fileAlign = layout.fileAlignment;
  const memAlign = Math.max(layout.sectionAlignment, PAGE);
  let rawAt = alignUp(pe.length, fileAlign);
  let vAt = alignUp(
    Math.max(...layout.sections.map((s) => s.virtualAddress + Math.max(s.virtualSize, s.rawSize))),
    memAlign,
  );
  const placed = sections.map((s) => {
    const p = { ...s, rawOffset: rawAt, rawSize: alignUp(s.data.length, fileAlign), vAddr: vAt };
    rawAt += p.rawSize;
    vAt = alignUp(vAt + s.data.length, memAlign);
    return p;
  });
  const out = new Uint8Array(rawAt);
  out.set(pe);
  const v = view(out);
  let headerAt = layout.sectionTable + layout.sections.length * SECTION_HEADER;
  for (const p of placed) {
    out.set(new TextEncoder().encode(p.name), headerAt);
    v.setUint32(headerAt + 8, p.data.length, true);
    v.setUint32(headerAt + 12, p.vAddr, true);
    v.setUint32(headerAt + 16, p.rawSize, true);
    v.setUint32(headerAt + 20, p.rawOffset, true);
    v.setUint32(headerAt + 36, READ_ONLY_DATA, true);
    out.set(p.data, p.rawOffset);
    headerAt += SECTION_HEADER;
  }
  const o = layout.optional;
  v.setUint16(layout.coff + 2, layout.sections.length + placed.length, true);
  const added = placed.reduce((n, p) => n + p.rawSize, 0);
  v.setUint32(o + 8, v.getUint32(o + 8, true) + added, true); // SizeOfInitializedData
  v.setUint32(o + 56, alignUp(vAt, layout.sectionAlignment), true); // SizeOfImage
  v.setUint32(o + 64, 0, true);
  v.setUint32(o + 64, peChecksum(out, o + 64), true);
  return out;
}

function checkAppendable(pe: Uint8Array, layout: PeLayout, sections: NewSection[]): void {
  const v = view(pe);
  // Data directory 4 (the certificate table) of a PE32+ optional header is at 144.
  if (v.getUint32(layout.optional + 144 + 4, true) !== 0) {
    throw new PeFormatError("the image is signed: append sections before signing");
  }
  const tableEnd = layout.sectionTable +
    (layout.sections.length + sections.length) * SECTION_HEADER;
  if (tableEnd > layout.sizeOfHeaders) {
    throw new PeFormatError(
      `no room for ${sections.length} more section headers before SizeOfHeaders ` +
        `(${layout.sizeOfHeaders} bytes)`,
    );
  }
  for (const s of sections) {
    if (new TextEncoder().encode(s.name).length > 8) {
      throw new PeFormatError(`section name ${s.name} is longer than 8 bytes`);
    }
    if (layout.sections.some((e) => e.name === s.name)) {
      throw new PeFormatError(`the image already has a ${s.name} section`);
    }
  }
}

/** The PE checksum (the image's 16-bit folded sum plus its length), its own field counted as 0. */
export function peChecksum(pe: Uint8Array, checksumAt: number): number {
  let sum = 0;
  const v = view(pe);
  for (let i = 0; i + 1 < pe.length; i += 2) {
    if (i === checksumAt || i === checksumAt + 2) continue;
    sum += v.getUint16(i, true);
    sum = (sum & 0xffff) + (sum >>> 16);
  }
  if (pe.length % 2) sum += pe[pe.length - 1];
  sum = (sum & 0xffff) + (sum >>> 16);
  return ((sum & 0xffff) + pe.length) >>> 0;
}

function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}
