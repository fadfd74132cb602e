/**
 * The Authenticode hash of a PE/COFF image (Microsoft's "Windows Authenticode
 * Portable Executable Signature Format", as UEFI firmware computes it): SHA-256
 * over the headers without the CheckSum field and the Certificate Table entry,
 * then each section's file data in file order, then the bytes after the sections'
 * sum up to the attribute certificate table, which is itself left out. One pass
 * over the file at most: sections may not overlap (pe_image.ts refuses it).
 * @module
 */
import { createHash } from "node:crypto";
import { AuthenticodeError } from "./authenticode_error.ts";
import { type PeImage, readPeImage } from "./pe_image.ts";

/** The largest image hashed unless the caller says otherwise: far above any UKI. */
export const DEFAULT_MAX_PE_BYTES = 256 * 1024 * 1024;

/** An image's Authenticode hash. */
export interface AuthenticodeDigest {
  sha256: Uint8Array;
}

/**
 * The Authenticode SHA-256 of `pe`, the value its signature's
 * SpcIndirectDataContent must carry.
 * @throws AuthenticodeError too-large past `maxBytes` (checked before reading),
 *   bad-pe when the image is not a well-formed PE32/PE32+ image.
 */
export function authenticodeDigest(
  pe: Uint8Array,
  maxBytes = DEFAULT_MAX_PE_BYTES,
): AuthenticodeDigest {
  checkSize(pe, maxBytes);
  return { sha256: digestOf(pe, readPeImage(pe)) };
}

/**
 * Refuse an image past `maxBytes` before any of it is parsed.
 * @throws AuthenticodeError too-large.
 */
export function checkSize(pe: Uint8Array, maxBytes: number): void {
  if (pe.length > maxBytes) {
    throw new AuthenticodeError("too-large", `image of ${pe.length} bytes exceeds ${maxBytes}`);
  }
}

/** The hash of an image already read. */
export function digestOf(pe: Uint8Array, image: PeImage): Uint8Array {
  const h = createHash("sha256");
  h.update(pe.subarray(0, image.checksumAt));
  h.update(pe.subarray(image.checksumAt + 4, image.certDirectoryAt));
  h.update(pe.subarray(image.certDirectoryAt + 8, image.sizeOfHeaders));
  let hashed = image.sizeOfHeaders;
  for (const s of image.sections) {
    h.update(pe.subarray(s.offset, s.offset + s.size));
    hashed += s.size;
  }
  // The spec's rule for the rest: from the offset equal to the bytes hashed so far
  // up to the file's size less the certificate table's (the table ends the file).
  const end = pe.length - (image.certTable?.size ?? 0);
  if (hashed > end) {
    throw new AuthenticodeError(
      "bad-pe",
      `headers and sections (${hashed} bytes) run into the certificate table at ${end}`,
    );
  }
  h.update(pe.subarray(hashed, end));
  return new Uint8Array(h.digest());
}
