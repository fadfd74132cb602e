/**
 * The few fields of a PE/COFF image that its Authenticode hash depends on: where
 * the CheckSum field and the Certificate Table entry (data directory 4) sit, the
 * headers' size, the sections' file ranges and the attribute certificate table.
 * Self-contained (the bundle room sits below the imager, whose UKI code reads PE
 * layouts to write them) and strict: every offset is checked against the file, and
 * layouts whose hash would cost more than a pass over the file (overlapping
 * sections) or leave signed bytes ambiguous (data after the certificate table)
 * are refused.
 * @module
 */
import { AuthenticodeError } from "./authenticode_error.ts";

/** One section's bytes in the file. */
export interface PeRange {
  offset: number;
  size: number;
}

/** A section with file data: its bytes in the file, its name and its size in memory. */
export interface PeSectionRange extends PeRange {
  /** The 8-byte name without trailing NULs (`.cmdline`). */
  name: string;
  /** VirtualSize: the bytes the image has in memory (the file's may be padded). */
  virtualSize: number;
}

/** What the Authenticode hash of an image needs to know about it. */
export interface PeImage {
  /** File offset of the optional header's CheckSum field (4 bytes). */
  checksumAt: number;
  /** File offset of the Certificate Table data-directory entry (8 bytes). */
  certDirectoryAt: number;
  sizeOfHeaders: number;
  /** Sections with file data, in file order; they do not overlap. */
  sections: PeSectionRange[];
  /** The attribute certificate table, when the image has one; it ends the file. */
  certTable?: PeRange;
}

/** COFF allows at most 96 sections. */
const MAX_SECTIONS = 96;
const SECTION_HEADER = 40;
const CERTIFICATE_DIRECTORY = 4;
const PE32 = 0x10b;
const PE32_PLUS = 0x20b;

/**
 * Read the layout of a PE32 or PE32+ image.
 * @throws AuthenticodeError bad-pe naming the first inconsistency.
 */
export function readPeImage(pe: Uint8Array): PeImage {
  const v = new DataView(pe.buffer, pe.byteOffset, pe.byteLength);
  const bad = (what: string) => new AuthenticodeError("bad-pe", what);
  if (pe.length < 0x40 || v.getUint16(0, true) !== 0x5a4d) throw bad("no MZ header");
  const peAt = v.getUint32(0x3c, true);
  if (peAt + 24 > pe.length || v.getUint32(peAt, true) !== 0x00004550) {
    throw bad("no PE signature");
  }
  const coff = peAt + 4;
  const count = v.getUint16(coff + 2, true);
  const optional = coff + 20;
  const optionalEnd = optional + v.getUint16(coff + 16, true);
  if (optionalEnd > pe.length || optionalEnd < optional + 2) {
    throw bad("optional header past the end");
  }
  const magic = v.getUint16(optional, true);
  if (magic !== PE32 && magic !== PE32_PLUS) {
    throw bad(`optional header magic 0x${magic.toString(16)} is neither PE32 nor PE32+`);
  }
  const directories = optional + (magic === PE32 ? 96 : 112);
  if (directories > optionalEnd) throw bad("optional header too short for its data directories");
  const directoryCount = v.getUint32(directories - 4, true);
  const certDirectoryAt = directories + CERTIFICATE_DIRECTORY * 8;
  if (directoryCount <= CERTIFICATE_DIRECTORY || certDirectoryAt + 8 > optionalEnd) {
    throw bad("no Certificate Table data directory");
  }
  if (count > MAX_SECTIONS) throw bad(`${count} sections (COFF allows ${MAX_SECTIONS})`);
  const sizeOfHeaders = v.getUint32(optional + 60, true);
  const sectionTableEnd = optionalEnd + count * SECTION_HEADER;
  if (sizeOfHeaders < sectionTableEnd || sizeOfHeaders > pe.length) {
    throw bad(`SizeOfHeaders ${sizeOfHeaders} does not hold the headers within the file`);
  }
  const certTable = certTableOf(v, certDirectoryAt, pe.length);
  const hashedEnd = certTable?.offset ?? pe.length;
  const sections = sectionsOf(v, optionalEnd, count, sizeOfHeaders, hashedEnd);
  return { checksumAt: optional + 64, certDirectoryAt, sizeOfHeaders, sections, certTable };
}

/** The certificate table the directory entry names, checked to end the file. */
function certTableOf(v: DataView, at: number, length: number): PeRange | undefined {
  const offset = v.getUint32(at, true);
  const size = v.getUint32(at + 4, true);
  if (offset === 0 && size === 0) return undefined;
  const where = `certificate table at ${offset} (${size} bytes) in a ${length}-byte image`;
  if (size === 0 || offset === 0) throw new AuthenticodeError("bad-pe", `empty ${where}`);
  if (offset % 8 !== 0) throw new AuthenticodeError("bad-pe", `unaligned ${where}`);
  if (offset + size > length) throw new AuthenticodeError("bad-pe", `truncated ${where}`);
  // Bytes after the table would be covered by no hash: refuse them (the firmware's
  // own hash would skip them too, so they could change without a new signature).
  if (offset + size < length) {
    throw new AuthenticodeError("bad-pe", `${length - offset - size} bytes follow the ${where}`);
  }
  return { offset, size };
}

/** The sections with file data, sorted by offset, each inside the hashed part of the file. */
function sectionsOf(
  v: DataView,
  table: number,
  count: number,
  sizeOfHeaders: number,
  hashedEnd: number,
): PeSectionRange[] {
  const out: PeSectionRange[] = [];
  for (let i = 0; i < count; i++) {
    const at = table + i * SECTION_HEADER;
    const size = v.getUint32(at + 16, true);
    const virtualSize = v.getUint32(at + 8, true);
    const nameBytes = new Uint8Array(v.buffer, v.byteOffset + at, 8);
    const name = String.fromCharCode(...nameBytes).replace(/\0+$/, "");
    const offset = v.getUint32(at + 20, true);
    if (size === 0) continue;
    if (offset < sizeOfHeaders || offset + size > hashedEnd) {
      throw new AuthenticodeError(
        "bad-pe",
        `section ${i} at ${offset} (${size} bytes) lies outside ${sizeOfHeaders}..${hashedEnd}`,
      );
    }
    out.push({ offset, size, name, virtualSize });
  }
  out.sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < out.length; i++) {
    if (out[i].offset < out[i - 1].offset + out[i - 1].size) {
      throw new AuthenticodeError("bad-pe", `sections overlap at file offset ${out[i].offset}`);
    }
  }
  return out;
}

/**
 * The bytes of the section named `name` as the image has them in memory
 * (cut at VirtualSize when the file's copy is padded); undefined when absent.
 * @throws AuthenticodeError bad-pe for an unreadable image.
 */
export function peSection(pe: Uint8Array, name: string): Uint8Array | undefined {
  const s = readPeImage(pe).sections.find((x) => x.name === name);
  if (!s) return undefined;
  return pe.subarray(s.offset, s.offset + Math.min(s.size, s.virtualSize || s.size));
}
