/**
 * Typed failures of the node PKI, so callers can tell a half-written PKI
 * directory from a corrupt certificate without parsing messages.
 *
 * @module
 */

/** What went wrong, as data a caller can switch on. */
export type PkiErrorKind =
  /** Some PKI files exist and others do not; re-keying silently would lock clients out. */
  | "partial"
  /** A file or document could not be parsed (bad PEM, bad YAML, wrong shape). */
  | "invalid"
  /** A private key does not belong to the certificate it was stored with. */
  | "key_mismatch"
  /** A file would be overwritten and `force` was not given. */
  | "exists"
  /** A client config has no such context. */
  | "no_context";

/** A PKI operation that could not be done, with the paths and names involved. */
export class PkiError extends Error {
  override name = "PkiError";
  constructor(
    /** The class of failure. */
    readonly kind: PkiErrorKind,
    message: string,
    /** Context: the directory or file, and for `partial` the missing/present file names. */
    readonly details: {
      path?: string;
      missing?: readonly string[];
      present?: readonly string[];
      context?: string;
    } = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** True when `e` is a {@link PkiError}, optionally of the given kind. */
export function isPkiError(e: unknown, kind?: PkiErrorKind): e is PkiError {
  return e instanceof PkiError && (kind === undefined || e.kind === kind);
}
