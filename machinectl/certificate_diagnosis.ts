/**
 * Why a node would refuse this client's certificate, found locally:
 * machinectl holds its certificate and its context's CA and can say which
 * check fails (the same checks apid makes), with the date or usage at fault,
 * which the TLS alert apid sends only names (`certificate_expired`). The
 * Deno apid sent no alert at all (docs/decisions.md).
 */
import {
  ClientCertificateError,
  type ClientCertificateProblem,
  verifyClientCertificate,
  x509,
} from "../pki/mod.ts";
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { clientConfigPath, type ConnectionFlags } from "./connection.ts";

/**
 * The reason, as "it expired on …", or undefined when the certificate passes
 * every local check (the node then has another CA, or other trouble).
 */
export async function diagnoseClientCertificate(
  certPem: string,
  caPem: string,
  now: Date = new Date(),
): Promise<string | undefined> {
  if (!certPem.trim()) return "this context has no client certificate";
  let cert: x509.X509Certificate;
  let ca: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(certPem);
  } catch {
    return "it cannot be parsed as a PEM certificate";
  }
  try {
    ca = new x509.X509Certificate(caPem);
  } catch {
    ca = cert; // no usable CA: only the certificate's own properties are checked
  }
  if (cert.extensions.length === 0) {
    return "it is an X.509 v1 certificate (no extensions, so no clientAuth usage)";
  }
  try {
    await verifyClientCertificate(cert, { cert: ca }, now);
  } catch (e) {
    if (e instanceof ClientCertificateError) return phrase(e.problem, cert, ca);
    throw e;
  }
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  if (ku && !(ku.usages & x509.KeyUsageFlags.digitalSignature)) {
    return "its key usage does not allow digitalSignature";
  }
  return undefined;
}

const EKU_NAMES: Record<string, string> = {
  "1.3.6.1.5.5.7.3.1": "serverAuth",
  "1.3.6.1.5.5.7.3.2": "clientAuth",
  "1.3.6.1.5.5.7.3.3": "codeSigning",
  "1.3.6.1.5.5.7.3.4": "emailProtection",
};

function phrase(
  problem: ClientCertificateProblem,
  cert: x509.X509Certificate,
  ca: x509.X509Certificate,
): string {
  switch (problem) {
    case "missing":
      return "this context has no client certificate";
    case "malformed":
      return "it cannot be parsed";
    case "untrusted":
      return `it is not signed by this context's CA ("${ca.subject}"; it names "${cert.issuer}")`;
    case "expired":
      return `it expired on ${cert.notAfter.toISOString()}`;
    case "not_yet_valid":
      return `it is not valid before ${cert.notBefore.toISOString()} (check this machine's clock)`;
    case "is_ca":
      return "it is a CA certificate, not a client certificate";
    case "not_client_auth": {
      const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
      const names = eku?.usages.map((u) => EKU_NAMES[String(u)] ?? String(u)).join(", ");
      return `it lacks the clientAuth extended key usage (${
        names ? `it has ${names}` : "it has none"
      })`;
    }
    case "no_role":
      return "it carries no role in O= (os:admin, os:operator or os:reader)";
  }
}

/** The diagnosis for the credentials `flags` select, or undefined when they cannot be read. */
export async function diagnoseFromFlags(flags: ConnectionFlags): Promise<string | undefined> {
  try {
    const creds = resolveCredentials(
      await readClientConfig(clientConfigPath(flags)),
      flags.context,
    );
    return await diagnoseClientCertificate(creds.certPem, creds.caPem);
  } catch {
    return undefined;
  }
}
