/**
 * The shape every issued certificate takes in memory: the parsed certificate,
 * its key, and both as PEM so they can be written or handed to TLS unchanged.
 *
 * @module
 */
import type { x509 } from "./x509_provider.ts";

/** A certificate together with its private key. */
export interface KeyedCertificate {
  /** The parsed certificate. */
  readonly cert: x509.X509Certificate;
  /** The certificate as a `CERTIFICATE` PEM block. */
  readonly certPem: string;
  /** The private key (extractable, ECDSA P-256). */
  readonly key: CryptoKey;
  /** The private key as a PKCS#8 `PRIVATE KEY` PEM block. */
  readonly keyPem: string;
}

/** A CA is a keyed certificate whose certificate has BasicConstraints CA:true. */
export type CertificateAuthority = KeyedCertificate;

/** Milliseconds in a day, for lifetimes. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** How far `notBefore` is set in the past, so a peer whose clock lags a little still accepts. */
export const NOT_BEFORE_SKEW_MS = 5 * 60 * 1000;

/** A fresh 128-bit positive serial number as hex (RFC 5280 allows up to 20 octets). */
export function randomSerialNumber(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] & 0x7f) | 0x01; // positive and never a leading zero octet
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
