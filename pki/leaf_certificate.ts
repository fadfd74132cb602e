/**
 * Issue an end-entity certificate signed by the node CA. Server and client
 * certificates are thin profiles over {@link issueLeafCertificate}; tests use
 * it directly to mint deliberately wrong certificates (expired, wrong EKU).
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import { generateKeyPair, privateKeyToPem, SIGNING_ALGORITHM } from "./key_pem.ts";
import {
  type CertificateAuthority,
  DAY_MS,
  type KeyedCertificate,
  NOT_BEFORE_SKEW_MS,
  randomSerialNumber,
} from "./keyed_certificate.ts";

/** Default leaf lifetime: 1 year. */
export const LEAF_LIFETIME_MS = 365 * DAY_MS;

/** Parameters of {@link issueLeafCertificate}. */
export interface LeafCertificateParams {
  /** The signing CA. */
  ca: CertificateAuthority;
  /** Subject as ordered RDNs, e.g. `[{ O: ["os:admin"] }, { CN: ["alice"] }]`. */
  subject: x509.JsonName;
  /** Extended key usage OIDs (see `x509.ExtendedKeyUsage`); empty omits the extension. */
  extendedKeyUsages: readonly string[];
  /** Subject alternative names. @default none */
  subjectAltNames?: x509.JsonGeneralNames;
  /** Issue time. @default new Date() */
  now?: Date;
  /** Lifetime in ms. @default LEAF_LIFETIME_MS */
  lifetimeMs?: number;
}

/**
 * Issue an X.509 v3 leaf certificate with a fresh key: BasicConstraints CA:false,
 * KeyUsage digitalSignature (critical), the given EKUs, SKI and an AKI that
 * matches the CA's SKI, and a random 128-bit serial.
 */
export async function issueLeafCertificate(
  params: LeafCertificateParams,
): Promise<KeyedCertificate> {
  const now = params.now ?? new Date();
  const keys = await generateKeyPair();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await authorityKeyIdentifier(params.ca.cert),
  ];
  if (params.extendedKeyUsages.length > 0) {
    extensions.push(new x509.ExtendedKeyUsageExtension([...params.extendedKeyUsages], false));
  }
  if (params.subjectAltNames?.length) {
    extensions.push(new x509.SubjectAlternativeNameExtension(params.subjectAltNames, false));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: params.subject,
    issuer: params.ca.cert.subjectName,
    notBefore: new Date(now.getTime() - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(now.getTime() + (params.lifetimeMs ?? LEAF_LIFETIME_MS)),
    publicKey: keys.publicKey,
    signingKey: params.ca.key,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions,
  });
  return {
    cert,
    certPem: cert.toString("pem"),
    key: keys.privateKey,
    keyPem: await privateKeyToPem(keys.privateKey),
  };
}

/** AKI carrying exactly the CA's SKI, so chain builders match issuer by key id. */
async function authorityKeyIdentifier(
  caCert: x509.X509Certificate,
): Promise<x509.AuthorityKeyIdentifierExtension> {
  const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  return ski
    ? new x509.AuthorityKeyIdentifierExtension(ski.keyId, false)
    : await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey, false);
}
