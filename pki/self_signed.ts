/**
 * The maintenance server certificate: a node that has no CA yet (a generic
 * image, booted before it is given a config) still serves TLS, with a
 * self-signed certificate made at boot. Nobody can verify it against a CA, so
 * its SHA-256 fingerprint is printed on the console and in the kernel log, and
 * `machinectl apply-config --insecure --fingerprint SHA256:…` pins it.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import { generateKeyPair, privateKeyToPem, SIGNING_ALGORITHM } from "./key_pem.ts";
import {
  DAY_MS,
  type KeyedCertificate,
  NOT_BEFORE_SKEW_MS,
  randomSerialNumber,
} from "./keyed_certificate.ts";
import { serverSubjectAltNames } from "./server_certificate.ts";

/** Names the self-signed certificate carries (informative: clients pin the fingerprint). */
export interface SelfSignedParams {
  readonly hostnames: readonly string[];
  readonly addresses: readonly string[];
  /** @default 30 days */
  readonly lifetimeMs?: number;
  /** @default now */
  readonly now?: Date;
}

/** A self-signed serverAuth certificate and its key (CA:false: it signs nothing). */
export async function createSelfSignedServerCertificate(
  params: SelfSignedParams,
): Promise<KeyedCertificate> {
  const now = params.now ?? new Date();
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: [{ O: ["machined maintenance"] }, {
      CN: [params.hostnames.find((h) => h) ?? "machined"],
    }],
    notBefore: new Date(now.getTime() - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(now.getTime() + (params.lifetimeMs ?? 30 * DAY_MS)),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(
        serverSubjectAltNames(params.hostnames, params.addresses),
      ),
    ],
  });
  return {
    cert,
    certPem: cert.toString("pem"),
    key: keys.privateKey,
    keyPem: await privateKeyToPem(keys.privateKey),
  };
}

/**
 * `SHA256:` then the lowercase hex SHA-256 of the certificate's DER, the form
 * the node prints and `--fingerprint` takes.
 */
export async function certificateFingerprint(
  der: ArrayBuffer | Uint8Array | x509.X509Certificate,
): Promise<string> {
  const bytes = der instanceof x509.X509Certificate ? new Uint8Array(der.rawData) : der;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return `SHA256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Normalizes a fingerprint as an operator may type it: `SHA256:` optional,
 * case and `:` separators ignored (`AB:CD:…` as OpenSSL prints it).
 * @throws TypeError when it is not 32 bytes of hex.
 */
export function parseFingerprint(text: string): string {
  const hex = text.trim().replace(/^sha256:/i, "").replaceAll(":", "").toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw new TypeError(
      `"${text}" is not a SHA-256 fingerprint (expected SHA256: and 64 hex digits)`,
    );
  }
  return `SHA256:${hex}`;
}
