/**
 * Why an EFI image's Authenticode signature was refused: one typed error with a
 * closed `reason`, as bundle/errors.ts does for bundles, so the upgrade path can
 * map each to a code and a test can name it.
 * @module
 */

/** Every reason an image is refused. */
export type AuthenticodeRefusal =
  /** The image, or its certificate table, is not a well-formed PE/COFF image. */
  | "bad-pe"
  /** The image or its certificate table is larger than the caller's limit. */
  | "too-large"
  /** The image carries no Authenticode signature. */
  | "unsigned"
  /** A signature uses a revision, type or algorithm this verifier does not accept. */
  | "unsupported"
  /** The image's Authenticode hash is not the one its signature covers. */
  | "digest-mismatch"
  /** The PKCS#7 signature is malformed or does not verify with its signer's key. */
  | "bad-signature"
  /** The signer is neither a db certificate nor issued by one. */
  | "untrusted-signer";

/** A refused image: it must not be written where the firmware would boot it. */
export class AuthenticodeError extends Error {
  override name = "AuthenticodeError";
  constructor(readonly reason: AuthenticodeRefusal, message: string, options?: ErrorOptions) {
    super(`EFI image refused (${reason}): ${message}`, options);
  }
}

/** Whether `e` is an {@link AuthenticodeError}, optionally of one reason. */
export function isAuthenticodeError(
  e: unknown,
  reason?: AuthenticodeRefusal,
): e is AuthenticodeError {
  return e instanceof AuthenticodeError && (reason === undefined || e.reason === reason);
}
