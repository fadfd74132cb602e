/**
 * The attribute certificate table of a PE image: WIN_CERTIFICATE entries, each
 * a length, a revision, a type and its bytes, 8-byte aligned, back to back up to
 * the table's end. Bounded before anything is parsed: the table's size and the
 * number of entries have caps far above what a signer writes.
 * @module
 */
import { AuthenticodeError } from "./authenticode_error.ts";
import { checkSize, DEFAULT_MAX_PE_BYTES } from "./digest.ts";
import { readPeImage } from "./pe_image.ts";

/** The largest certificate table read: a signature with its chain is a few KiB. */
export const MAX_CERT_TABLE_BYTES = 64 * 1024;
/** The most WIN_CERTIFICATE entries read from one table. */
export const MAX_SIGNATURES = 8;
/** WIN_CERT_REVISION_2_0. */
export const WIN_CERT_REVISION_2_0 = 0x0200;
/** WIN_CERT_TYPE_PKCS_SIGNED_DATA: the entry is a PKCS#7 SignedData. */
export const WIN_CERT_TYPE_PKCS_SIGNED_DATA = 0x0002;
const WIN_CERTIFICATE_HEADER = 8;

/** One entry of the table, as found (its revision and type not yet judged). */
export interface AuthenticodeSignature {
  /** File offset of the entry. */
  offset: number;
  revision: number;
  type: number;
  /** bCertificate: for a PKCS#7 entry, the DER ContentInfo (maybe zero-padded). */
  data: Uint8Array;
}

/** Limits of {@link readAuthenticodeSignatures} and the verifier. */
export interface AuthenticodeLimits {
  /** @default DEFAULT_MAX_PE_BYTES (256 MiB) */
  maxPeBytes?: number;
  /** @default MAX_CERT_TABLE_BYTES (64 KiB) */
  maxCertTableBytes?: number;
}

/**
 * Every WIN_CERTIFICATE entry of `pe`'s attribute certificate table, in order;
 * empty when the image has no table.
 * @throws AuthenticodeError too-large past the limits (checked before parsing),
 *   bad-pe when the image or the table's entries are inconsistent.
 */
export function readAuthenticodeSignatures(
  pe: Uint8Array,
  limits: AuthenticodeLimits = {},
): AuthenticodeSignature[] {
  checkSize(pe, limits.maxPeBytes ?? DEFAULT_MAX_PE_BYTES);
  const table = readPeImage(pe).certTable;
  if (table === undefined) return [];
  const maxTable = limits.maxCertTableBytes ?? MAX_CERT_TABLE_BYTES;
  if (table.size > maxTable) {
    throw new AuthenticodeError(
      "too-large",
      `certificate table of ${table.size} bytes exceeds ${maxTable}`,
    );
  }
  return entriesOf(pe, table.offset, table.offset + table.size);
}

function entriesOf(pe: Uint8Array, start: number, end: number): AuthenticodeSignature[] {
  const v = new DataView(pe.buffer, pe.byteOffset, pe.byteLength);
  const out: AuthenticodeSignature[] = [];
  for (let at = start; at < end; at = alignUp(at + v.getUint32(at, true))) {
    if (out.length === MAX_SIGNATURES) {
      throw new AuthenticodeError("bad-pe", `more than ${MAX_SIGNATURES} certificate entries`);
    }
    if (at + WIN_CERTIFICATE_HEADER > end) {
      throw new AuthenticodeError("bad-pe", `truncated certificate entry header at ${at}`);
    }
    const length = v.getUint32(at, true);
    if (length < WIN_CERTIFICATE_HEADER || at + length > end) {
      throw new AuthenticodeError(
        "bad-pe",
        `certificate entry at ${at} of ${length} bytes overruns the table ending at ${end}`,
      );
    }
    out.push({
      offset: at,
      revision: v.getUint16(at + 4, true),
      type: v.getUint16(at + 6, true),
      data: pe.subarray(at + WIN_CERTIFICATE_HEADER, at + length),
    });
  }
  return out;
}

function alignUp(n: number): number {
  return Math.ceil(n / 8) * 8;
}
