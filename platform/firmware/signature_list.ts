/**
 * EFI_SIGNATURE_LIST parsing: the format of the PK, KEK, db and dbx variables (UEFI spec
 * 32.4.1). A variable holds lists back to back; each names a signature type, its own size, a
 * type-specific header and fixed-size signatures, each an owner GUID and its data (a DER
 * certificate for X.509 lists, 32 bytes for SHA-256 lists). Pure and bounded: the whole input
 * is refused past {@link MAX_SIGNATURE_DATABASE_BYTES} before any list is read, and every size
 * field is checked against what remains.
 * @module
 */
import { GUID_BYTES, guidAt, guidBytes } from "./guid.ts";

/** The largest signature database parsed (the whole variable): far above any real db. */
export const MAX_SIGNATURE_DATABASE_BYTES = 256 * 1024;
/** Bytes of an EFI_SIGNATURE_LIST header before its type-specific header. */
export const SIGNATURE_LIST_HEADER_BYTES = GUID_BYTES + 12;

/** One signature: who enrolled it and its data. */
export interface EfiSignature {
  /** The list's signature type GUID, e.g. EFI_CERT_X509_GUID. */
  readonly type: string;
  /** The SignatureOwner GUID. */
  readonly owner: string;
  /** The signature data (a DER certificate, a hash); a view into the input. */
  readonly data: Uint8Array;
}

/** Why a signature database could not be read; `offset` is where the problem was found. */
export class SignatureListError extends Error {
  override name = "SignatureListError";
  constructor(readonly offset: number, message: string) {
    super(message);
  }
}

/**
 * Every signature of the lists in `bytes` (the variable's data, without the efivarfs attribute
 * prefix), in order.
 * @throws SignatureListError when `bytes` exceeds `maxBytes` or a list's sizes are inconsistent.
 */
export function parseSignatureLists(
  bytes: Uint8Array,
  maxBytes = MAX_SIGNATURE_DATABASE_BYTES,
): EfiSignature[] {
  if (bytes.length > maxBytes) {
    throw new SignatureListError(
      0,
      `Signature database of ${bytes.length} bytes exceeds ${maxBytes}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: EfiSignature[] = [];
  let at = 0;
  while (at < bytes.length) {
    const remaining = bytes.length - at;
    if (remaining < SIGNATURE_LIST_HEADER_BYTES) {
      throw new SignatureListError(at, `Truncated signature list: ${remaining} bytes left`);
    }
    const type = guidAt(bytes, at);
    const listSize = view.getUint32(at + GUID_BYTES, true);
    const headerSize = view.getUint32(at + GUID_BYTES + 4, true);
    const signatureSize = view.getUint32(at + GUID_BYTES + 8, true);
    const problem = listProblem(listSize, headerSize, signatureSize, remaining);
    if (problem) throw new SignatureListError(at, `Signature list ${type} at ${at}: ${problem}`);
    const first = at + SIGNATURE_LIST_HEADER_BYTES + headerSize;
    for (let s = first; s < at + listSize; s += signatureSize) {
      out.push({
        type,
        owner: guidAt(bytes, s),
        data: bytes.subarray(s + GUID_BYTES, s + signatureSize),
      });
    }
    at += listSize;
  }
  return out;
}

/** What is wrong with one list's sizes, or undefined. Pure. */
export function listProblem(
  listSize: number,
  headerSize: number,
  signatureSize: number,
  remaining: number,
): string | undefined {
  if (listSize > remaining) return `list size ${listSize} exceeds the ${remaining} bytes left`;
  if (signatureSize <= GUID_BYTES) return `signature size ${signatureSize} holds no data`;
  const body = listSize - SIGNATURE_LIST_HEADER_BYTES - headerSize;
  if (body < 0) return `list size ${listSize} is smaller than its headers`;
  if (body % signatureSize !== 0) {
    return `${body} bytes of signatures are not a multiple of the signature size ${signatureSize}`;
  }
  return undefined;
}

/**
 * One EFI_SIGNATURE_LIST of `signatures` of one type and size, for tests and fakes (the inverse
 * of {@link parseSignatureLists}).
 * @throws RangeError when the signatures' data differ in length.
 */
export function buildSignatureList(
  type: string,
  signatures: readonly { owner: string; data: Uint8Array }[],
): Uint8Array {
  const dataSize = signatures[0]?.data.length ?? 0;
  if (signatures.some((s) => s.data.length !== dataSize)) {
    throw new RangeError("Every signature of one list must have the same size");
  }
  const signatureSize = GUID_BYTES + dataSize;
  const out = new Uint8Array(SIGNATURE_LIST_HEADER_BYTES + signatures.length * signatureSize);
  const view = new DataView(out.buffer);
  out.set(guidBytes(type), 0);
  view.setUint32(GUID_BYTES, out.length, true);
  view.setUint32(GUID_BYTES + 4, 0, true);
  view.setUint32(GUID_BYTES + 8, signatureSize, true);
  signatures.forEach((s, i) => {
    const at = SIGNATURE_LIST_HEADER_BYTES + i * signatureSize;
    out.set(guidBytes(s.owner), at);
    out.set(s.data, at + GUID_BYTES);
  });
  return out;
}
