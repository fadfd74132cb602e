/**
 * API roles and how they are carried: in the `O=` (organization) attribute of a
 * client certificate's subject, as Talos does. The CA signing a certificate is
 * what grants the role, so no other lookup is needed at connection time.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";

/** Every role, most privileged first. */
export const ROLES = ["os:admin", "os:operator", "os:reader"] as const;

/** A role a client certificate can carry. */
export type Role = typeof ROLES[number];

/** True when `value` names a {@link Role}. */
export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** Anything a peer certificate may arrive as: PEM text, DER bytes, a parsed one, or `getPeerCertificate()` output. */
export type CertificateInput =
  | string
  | ArrayBuffer
  | Uint8Array
  | x509.X509Certificate
  | { readonly raw: Uint8Array };

/**
 * Parse a certificate from any {@link CertificateInput}.
 * @throws {TypeError} for other values; Error from the parser when the bytes are not a certificate
 */
export function toCertificate(input: CertificateInput): x509.X509Certificate {
  if (input instanceof x509.X509Certificate) return input;
  if (typeof input === "string" || input instanceof ArrayBuffer) {
    return new x509.X509Certificate(input);
  }
  if (input instanceof Uint8Array) return new x509.X509Certificate(new Uint8Array(input));
  if (typeof input === "object" && input !== null && input.raw instanceof Uint8Array) {
    return new x509.X509Certificate(new Uint8Array(input.raw));
  }
  throw new TypeError("Not a certificate: expected PEM, DER bytes or an object with `raw` bytes");
}

/**
 * The role a client certificate carries, from its subject's `O=` values.
 * Unknown organizations are ignored; when several roles are present the most
 * privileged wins (the CA signed all of them). Returns `undefined` for no role,
 * an empty `getPeerCertificate()` result, or bytes that are not a certificate:
 * this is a gate, so it never throws.
 *
 * This reads the subject only; it does not check the signature. Call it on a
 * certificate the TLS layer verified, or after `verifyClientCertificate`.
 */
export function roleFromCertificate(input: CertificateInput): Role | undefined {
  try {
    return roleFromOrganizations(toCertificate(input).subjectName.getField("O"));
  } catch {
    return undefined;
  }
}

/** The most privileged role among organization values, if any. Pure. */
export function roleFromOrganizations(organizations: readonly string[]): Role | undefined {
  return ROLES.find((role) => organizations.includes(role));
}
