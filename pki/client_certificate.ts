/**
 * Client certificates for `machinectl`: `CN=<name>`, `O=<role>`, clientAuth.
 * The role in `O=` is what the API authorizes on.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import type { CertificateAuthority, KeyedCertificate } from "./keyed_certificate.ts";
import { issueLeafCertificate } from "./leaf_certificate.ts";
import { isRole, type Role } from "./role.ts";
import { certificateNameProblem } from "./certificate_name.ts";

/** Parameters of {@link issueClientCertificate}. */
export interface ClientCertificateParams {
  /** The node CA. */
  ca: CertificateAuthority;
  /** Who the certificate is for (its CN), e.g. `admin` or `alice`. */
  name: string;
  /** The role it grants. */
  role: Role;
  /** Issue time. @default new Date() */
  now?: Date;
  /** Lifetime in ms. @default LEAF_LIFETIME_MS (1 year) */
  lifetimeMs?: number;
}

/**
 * Issue a client certificate (ExtendedKeyUsage clientAuth).
 * @throws {RangeError} when `role` is not a role or `name` is not a
 *   certificate name (empty, too long, or holding a control, format or
 *   separator character: see certificate_name.ts)
 */
export async function issueClientCertificate(
  params: ClientCertificateParams,
): Promise<KeyedCertificate> {
  if (!isRole(params.role)) {
    throw new RangeError(`Cannot issue a client certificate for role "${params.role}"`);
  }
  const problem = certificateNameProblem(params.name);
  if (problem !== undefined) {
    throw new RangeError(`Cannot issue a client certificate: the name ${problem}`);
  }
  return await issueLeafCertificate({
    ca: params.ca,
    subject: [{ O: [params.role] }, { CN: [params.name] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
    now: params.now,
    lifetimeMs: params.lifetimeMs,
  });
}
