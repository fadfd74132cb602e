/**
 * EFI GUIDs as they sit in firmware structures: the first three fields little-endian, the last
 * eight bytes in order (UEFI spec, appendix A). Variable names and signature types use them.
 * @module
 */

/** Bytes a GUID takes. */
export const GUID_BYTES = 16;

/** The global variable vendor GUID (SecureBoot, SetupMode, PK, KEK). */
export const EFI_GLOBAL_VARIABLE_GUID = "8be4df61-93ca-11d2-aa0d-00e098032b8c";
/** The image security database vendor GUID (db, dbx). */
export const EFI_IMAGE_SECURITY_DATABASE_GUID = "d719b2cb-3d3a-4596-a3bc-dad00e67656f";
/** Signature type of a DER X.509 certificate entry. */
export const EFI_CERT_X509_GUID = "a5c059a1-94e4-4aa7-87b5-ab155c2bf072";
/** Signature type of a SHA-256 image hash entry. */
export const EFI_CERT_SHA256_GUID = "c1c41626-504c-4092-aca9-41f936934328";

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The GUID at `offset` of `bytes` in its usual lower-case text form.
 * @throws RangeError when fewer than 16 bytes remain.
 */
export function guidAt(bytes: Uint8Array, offset: number): string {
  if (offset < 0 || offset + GUID_BYTES > bytes.length) {
    throw new RangeError(`No GUID at offset ${offset} of ${bytes.length} bytes`);
  }
  const b = bytes.subarray(offset, offset + GUID_BYTES);
  const le = (from: number, n: number) => hex(b.slice(from, from + n).reverse());
  return `${le(0, 4)}-${le(4, 2)}-${le(6, 2)}-${hex(b.subarray(8, 10))}-${hex(b.subarray(10))}`;
}

/**
 * The 16 bytes of a GUID in text form, for building firmware structures (tests, fakes).
 * @throws TypeError when `guid` is not 8-4-4-4-12 hex digits.
 */
export function guidBytes(guid: string): Uint8Array {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(guid)) {
    throw new TypeError(`Not a GUID: ${JSON.stringify(guid)}`);
  }
  const h = guid.replaceAll("-", "");
  const at = (i: number) => parseInt(h.slice(i * 2, i * 2 + 2), 16);
  const order = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
  return Uint8Array.from(order, at);
}
