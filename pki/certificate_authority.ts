/**
 * The node CA: a self-signed ECDSA P-256 root that signs the API server's
 * certificate and every client certificate. It lives 10 years because
 * re-keying it invalidates every client config already handed out.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import {
  certificateFromPem,
  generateKeyPair,
  keyMatchesCertificate,
  privateKeyFromPem,
  privateKeyToPem,
  SIGNING_ALGORITHM,
} from "./key_pem.ts";
import {
  type CertificateAuthority,
  DAY_MS,
  NOT_BEFORE_SKEW_MS,
  randomSerialNumber,
} from "./keyed_certificate.ts";
import { PkiError } from "./pki_error.ts";

/** Default CA lifetime: 10 years. */
export const CA_LIFETIME_MS = 3650 * DAY_MS;

/** Options for {@link createCertificateAuthority}. */
export interface CreateCaOptions {
  /** Common name of the CA. @default "machined" */
  commonName?: string;
  /** Issue time. @default new Date() */
  now?: Date;
  /** Lifetime in ms. @default CA_LIFETIME_MS */
  lifetimeMs?: number;
}

/**
 * Create a new self-signed CA (X.509 v3, BasicConstraints CA:true critical,
 * KeyUsage keyCertSign+cRLSign critical, SubjectKeyIdentifier).
 */
export async function createCertificateAuthority(
  options: CreateCaOptions = {},
): Promise<CertificateAuthority> {
  const now = options.now ?? new Date();
  const keys = await generateKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerialNumber(),
    name: [{ O: ["machined"] }, { CN: [options.commonName ?? "machined"] }],
    notBefore: new Date(now.getTime() - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(now.getTime() + (options.lifetimeMs ?? CA_LIFETIME_MS)),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign |
          x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
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
 * Rebuild a CA from its PEM certificate and key.
 * @param source where they came from (a directory or file), named in errors
 * @throws {PkiError} `invalid` when either does not parse or the certificate is
 *   not a CA; `key_mismatch` when the key is not the certificate's key
 */
export async function loadCertificateAuthority(
  certPem: string,
  keyPem: string,
  source = "CA",
): Promise<CertificateAuthority> {
  const cert = certificateFromPem(certPem, `${source} certificate`);
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  if (!basic?.ca) {
    throw new PkiError("invalid", `Certificate "${cert.subject}" from ${source} is not a CA`, {
      path: source,
    });
  }
  const key = await privateKeyFromPem(keyPem, `${source} key`);
  if (!(await keyMatchesCertificate(key, cert))) {
    throw new PkiError(
      "key_mismatch",
      `The CA key from ${source} does not match CA certificate "${cert.subject}"`,
      { path: source },
    );
  }
  return { cert, certPem: cert.toString("pem"), key, keyPem };
}
