/**
 * Who signed: the signer's certificate picked by the SignerInfo's identifier, its
 * RSA signature over the signed attributes checked with WebCrypto, and whether a
 * db certificate vouches for it (it is one, or one issued it). One level, as a
 * db of the owner's own self-signed keys needs; chains through intermediates are
 * not followed. Validity dates are not checked: UEFI firmware has no trusted
 * clock and does not check them either.
 * @module
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import type { SignerIdentifier } from "@peculiar/asn1-cms";
import { certificateFingerprint, x509 } from "../../pki/mod.ts";
import { AuthenticodeError } from "./authenticode_error.ts";

/** A db entry: an X.509 certificate, PEM or DER. */
export type DbCertificate = { certPem: string } | { der: Uint8Array };

const RSA_SHA256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };

/**
 * The db's certificates, parsed.
 * @throws TypeError naming the entry that is not an X.509 certificate.
 */
export function parseDb(db: readonly DbCertificate[]): x509.X509Certificate[] {
  return db.map((entry, i) => {
    try {
      return new x509.X509Certificate("certPem" in entry ? entry.certPem : entry.der.slice());
    } catch (e) {
      throw new TypeError(`db entry ${i} is not an X.509 certificate: ${(e as Error).message}`, {
        cause: e,
      });
    }
  });
}

/**
 * The certificate `sid` names among `candidates` (the SignedData's, then the db's).
 * @throws AuthenticodeError bad-signature when none matches or one is malformed.
 */
export function signerCertificate(
  sid: SignerIdentifier,
  carried: readonly Uint8Array[],
  db: readonly x509.X509Certificate[],
): x509.X509Certificate {
  let certs: x509.X509Certificate[];
  try {
    certs = [...carried.map((der) => new x509.X509Certificate(der.slice())), ...db];
  } catch (e) {
    throw new AuthenticodeError("bad-signature", `a carried certificate is malformed`, {
      cause: e,
    });
  }
  const found = certs.find((c) => identifies(sid, c));
  if (found === undefined) {
    throw new AuthenticodeError("bad-signature", "no certificate matches the signer identifier");
  }
  return found;
}

function identifies(sid: SignerIdentifier, cert: x509.X509Certificate): boolean {
  const byIssuer = sid.issuerAndSerialNumber;
  if (byIssuer !== undefined) {
    const issuer = new Uint8Array(AsnConvert.serialize(byIssuer.issuer));
    return hex(new Uint8Array(byIssuer.serialNumber)) === cert.serialNumber.toLowerCase() &&
      equal(issuer, new Uint8Array(cert.issuerName.toArrayBuffer()));
  }
  const ski = sid.subjectKeyIdentifier;
  const ext = cert.getExtension(x509.SubjectKeyIdentifierExtension);
  return ski !== undefined && ext !== null &&
    hex(new Uint8Array(ski.buffer)) === ext.keyId.toLowerCase();
}

/**
 * Check the signer's RSA PKCS#1 v1.5 SHA-256 signature over the signed attributes.
 * @throws AuthenticodeError unsupported for a key that is not RSA, bad-signature
 *   when it does not verify.
 */
export async function checkSignature(
  cert: x509.X509Certificate,
  signedAttributes: Uint8Array,
  signature: Uint8Array,
): Promise<void> {
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey(
      "spki",
      cert.publicKey.rawData,
      RSA_SHA256,
      false,
      ["verify"],
    );
  } catch (e) {
    throw new AuthenticodeError("unsupported", `the signer's key is not RSA (${cert.subject})`, {
      cause: e,
    });
  }
  const ok = await crypto.subtle.verify(
    RSA_SHA256,
    key,
    signature as BufferSource,
    signedAttributes as BufferSource,
  );
  if (!ok) {
    throw new AuthenticodeError(
      "bad-signature",
      `the signature of ${cert.subject} does not verify`,
    );
  }
}

/**
 * The fingerprint (`SHA256:<hex>`) of the db certificate that vouches for `signer`.
 * @throws AuthenticodeError untrusted-signer when none does.
 */
export async function trustedBy(
  signer: x509.X509Certificate,
  db: readonly x509.X509Certificate[],
): Promise<string> {
  const der = new Uint8Array(signer.rawData);
  for (const anchor of db) {
    if (equal(der, new Uint8Array(anchor.rawData))) return await certificateFingerprint(anchor);
  }
  for (const anchor of db) {
    if (signer.issuer !== anchor.subject) continue;
    const issued = await signer
      .verify({ publicKey: anchor.publicKey, signatureOnly: true })
      .catch(() => false);
    if (issued) return await certificateFingerprint(anchor);
  }
  throw new AuthenticodeError(
    "untrusted-signer",
    `${signer.subject} (issued by ${signer.issuer}) is not in db nor issued by a db certificate`,
  );
}

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
