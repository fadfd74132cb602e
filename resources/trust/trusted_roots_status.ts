/**
 * TrustedRootsStatus: the CA bundle the node wrote: where, its SHA-256 (services opted in to
 * `restart_on_trusted_roots`, and containerd, restart when it changes), how many certificates
 * came from the image's system bundle, and each of `machine.trusted_roots` with its subject,
 * fingerprint and expiry. Certificates are public, so any role may read it. Written only by
 * trust.TrustedRootsController; docs/hardening.md.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const TRUSTED_ROOTS_STATUS = "TrustedRootsStatus";
/** The single TrustedRootsStatus's id. */
export const TRUSTED_ROOTS_STATUS_ID = "bundle";

/** One configured trusted root, as written into the bundle. */
export interface TrustedRootStatus {
  /** Its `name` in the config. */
  readonly name: string;
  /** RFC 4514 subject. */
  readonly subject: string;
  /** `SHA256:` and the hex SHA-256 of its DER. */
  readonly fingerprint: string;
  /** notAfter, ISO 8601. */
  readonly notAfter: string;
}

export interface TrustedRootsStatusSpec {
  /** The bundle's path: services get it as SSL_CERT_FILE and DENO_CERT. */
  readonly path: string;
  /** Lower-case hex SHA-256 of the bundle's bytes. */
  readonly sha256: string;
  /** The system bundle copied first (Debian's ca-certificates). */
  readonly systemBundle: string;
  /** Certificates taken from it. */
  readonly systemCertificates: number;
  /** Why the system bundle could not be read (then only the configured roots are trusted); "" when it was. */
  readonly systemError: string;
  /** `machine.trusted_roots`, in config order. */
  readonly roots: readonly TrustedRootStatus[];
}

export const trustedRootsStatusDescriptor: ResourceDescriptor<
  typeof TRUSTED_ROOTS_STATUS,
  TrustedRootsStatusSpec
> = {
  type: TRUSTED_ROOTS_STATUS,
  namespace: "runtime",
  aliases: ["trustedrootsstatus", "trustedrootsstatuses", "trustedroots", "trs"],
  description:
    "The CA bundle services and machined trust: system certificates plus configured roots",
  columns: [
    { header: "SHA256", value: (s) => s.sha256.slice(0, 12) },
    { header: "SYSTEM", value: (s) => s.systemError ? "unreadable" : String(s.systemCertificates) },
    { header: "ROOTS", value: (s) => s.roots.map((r) => r.name).join(",") },
    { header: "PATH", value: (s) => s.path },
  ],
};
