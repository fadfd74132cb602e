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
  authorityKeyIdentifier,
  digitalSignatureKeyUsage,
  endEntityConstraints,
  extendedKeyUsage,
  nameDer,
  signedCertificate,
  subjectAltName,
  subjectKeyIdentifier,
  tbsCertificate,
} from "./leaf_der.ts";
import { hexBytes } from "./der.ts";
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
 * KeyUsage digitalSignature (critical), SKI and an AKI that matches the CA's
 * SKI, the given EKUs and SANs, and a random 128-bit serial. The DER is written
 * directly (pki/leaf_der.ts), the signature is WebCrypto's.
 */
export async function issueLeafCertificate(
  params: LeafCertificateParams,
): Promise<KeyedCertificate> {
  const now = params.now ?? new Date();
  const keys = await generateKeyPair();
  const [spki, point] = await Promise.all([
    crypto.subtle.exportKey("spki", keys.publicKey),
    crypto.subtle.exportKey("raw", keys.publicKey),
  ]);
  const issuer = await issuerOf(params.ca.cert);
  const extensions = [
    endEntityConstraints(),
    digitalSignatureKeyUsage(),
    // RFC 5280 4.2.1.2 method 1, as the library computes it: SHA-1 of the public key's bits.
    subjectKeyIdentifier(new Uint8Array(await crypto.subtle.digest("SHA-1", point))),
    authorityKeyIdentifier(issuer.keyId),
  ];
  if (params.extendedKeyUsages.length > 0) {
    extensions.push(extendedKeyUsage(params.extendedKeyUsages));
  }
  if (params.subjectAltNames?.length) extensions.push(subjectAltName(params.subjectAltNames));
  const tbs = tbsCertificate({
    serialHex: randomSerialNumber(),
    issuer: issuer.name,
    subject: nameDer(params.subject),
    notBefore: new Date(now.getTime() - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(now.getTime() + (params.lifetimeMs ?? LEAF_LIFETIME_MS)),
    spki: new Uint8Array(spki),
    extensions,
  });
  const signature = await crypto.subtle.sign(SIGNING_ALGORITHM, params.ca.key, tbs);
  const cert = new x509.X509Certificate(signedCertificate(tbs, new Uint8Array(signature)));
  return {
    cert,
    certPem: cert.toString("pem"),
    key: keys.privateKey,
    keyPem: await privateKeyToPem(keys.privateKey),
  };
}

/** A CA's subject (DER) and key identifier, as every leaf it signs names them. */
interface Issuer {
  readonly name: Uint8Array;
  readonly keyId: Uint8Array;
}

/** Per CA certificate object: read once, since parsing extensions is the slow part. */
const issuers = new WeakMap<x509.X509Certificate, Promise<Issuer>>();

/**
 * The CA's subject and the key id an AKI carries: exactly the CA's SKI, so
 * chain builders match issuer by key id; a CA without one gets the SHA-1 of
 * its public key's bits, as the SKI would have been made.
 */
function issuerOf(caCert: x509.X509Certificate): Promise<Issuer> {
  let issuer = issuers.get(caCert);
  if (!issuer) {
    issuer = (async () => {
      const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
      const keyId = ski
        ? hexBytes(ski.keyId)
        : new Uint8Array(await caCert.publicKey.getKeyIdentifier());
      return { name: new Uint8Array(caCert.subjectName.toArrayBuffer()), keyId };
    })();
    issuers.set(caCert, issuer);
  }
  return issuer;
}
