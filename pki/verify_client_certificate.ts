/**
 * Application-level check of a client certificate, for the API to run before
 * any handler. Deno's TLS (rustls) already rejects certificates from another
 * CA, expired or not-yet-valid ones and ones without the clientAuth EKU, but it
 * accepts a certificate with no EKU at all, such as the CA certificate itself
 * (measured on Deno 2.9.3; see docs/decisions.md). This check closes that gap
 * and extracts the identity in one step.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import type { CertificateAuthority } from "./keyed_certificate.ts";
import { type CertificateInput, type Role, roleFromCertificate, toCertificate } from "./role.ts";

/** Why a client certificate was refused. */
export type ClientCertificateProblem =
  | "missing"
  | "malformed"
  | "untrusted"
  | "expired"
  | "not_yet_valid"
  | "is_ca"
  | "not_client_auth"
  | "no_role";

/** A client certificate the API must refuse, with the reason as data. */
export class ClientCertificateError extends Error {
  override name = "ClientCertificateError";
  constructor(
    /** Why it was refused. */
    readonly problem: ClientCertificateProblem,
    /** The certificate subject, when it could be read. */
    readonly subject: string | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Who a verified client is. */
export interface ClientIdentity {
  /** The subject CN. */
  readonly name: string;
  /** The role from `O=`. */
  readonly role: Role;
  /** Hex serial number, for audit logs. */
  readonly serialNumber: string;
  /** When the certificate expires. */
  readonly notAfter: Date;
}

/**
 * Verify that `peer` was issued by `ca`, is valid at `now`, is an end-entity
 * certificate with the clientAuth EKU, and carries a role.
 * @param peer what `getPeerCertificate()` returned (`{ raw }`, or `{}` when the client sent none), PEM or DER
 * @param ca the node CA (only its certificate is used)
 * @throws {ClientCertificateError} naming the problem
 */
export async function verifyClientCertificate(
  peer: CertificateInput | Record<string, never> | null | undefined,
  ca: Pick<CertificateAuthority, "cert">,
  now: Date = new Date(),
): Promise<ClientIdentity> {
  if (!peer || (typeof peer === "object" && Object.keys(peer).length === 0 && !isBinary(peer))) {
    throw new ClientCertificateError("missing", undefined, "The client sent no certificate");
  }
  let cert: x509.X509Certificate;
  try {
    cert = toCertificate(peer as CertificateInput);
  } catch (e) {
    throw new ClientCertificateError("malformed", undefined, "Cannot parse client certificate", {
      cause: e,
    });
  }
  const subject = cert.subject;
  const reject = (problem: ClientCertificateProblem, message: string) =>
    new ClientCertificateError(problem, subject, `Client certificate "${subject}" ${message}`);
  const signed = cert.issuer === ca.cert.subject &&
    await cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true });
  if (!signed) throw reject("untrusted", `is not issued by CA "${ca.cert.subject}"`);
  if (now < cert.notBefore) {
    throw reject("not_yet_valid", `is not valid before ${iso(cert.notBefore)}`);
  }
  if (now > cert.notAfter) throw reject("expired", `expired at ${iso(cert.notAfter)}`);
  if (cert.getExtension(x509.BasicConstraintsExtension)?.ca) {
    throw reject("is_ca", "is a CA certificate");
  }
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  if (!eku?.usages.includes(x509.ExtendedKeyUsage.clientAuth)) {
    throw reject("not_client_auth", "lacks the clientAuth extended key usage");
  }
  const role = roleFromCertificate(cert);
  if (!role) throw reject("no_role", "carries no role in O=");
  return {
    name: cert.subjectName.getField("CN")[0] ?? "",
    role,
    serialNumber: cert.serialNumber,
    notAfter: cert.notAfter,
  };
}

function isBinary(value: object): boolean {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

function iso(d: Date): string {
  return d.toISOString();
}
