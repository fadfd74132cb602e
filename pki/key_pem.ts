/**
 * Key generation and PEM (PKCS#8) encoding for the node PKI. One algorithm for
 * every key: ECDSA P-256 with SHA-256, accepted by Deno's TLS (rustls), Go's
 * crypto/tls (grpcurl) and OpenSSL (curl) alike; see docs/decisions.md.
 *
 * @module
 */
import { x509 } from "./x509_provider.ts";
import { PkiError } from "./pki_error.ts";

/** Key generation/import parameters for every key in the PKI. */
export const KEY_ALGORITHM: EcKeyGenParams & EcKeyImportParams = {
  name: "ECDSA",
  namedCurve: "P-256",
};

/** Signature algorithm for every certificate the PKI issues. */
export const SIGNING_ALGORITHM: EcdsaParams = { name: "ECDSA", hash: "SHA-256" };

/** Make a fresh, extractable key pair (it must be exportable to be written to disk). */
export function generateKeyPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(KEY_ALGORITHM, true, ["sign", "verify"]);
}

/** Encode a private key as a `-----BEGIN PRIVATE KEY-----` (PKCS#8) PEM block. */
export async function privateKeyToPem(key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

/**
 * Decode a PKCS#8 PEM private key into a signing key.
 * @param source where the PEM came from, named in the error
 * @throws {PkiError} kind `invalid` when the PEM is not a P-256 PKCS#8 key
 */
export async function privateKeyFromPem(pem: string, source = "private key"): Promise<CryptoKey> {
  try {
    const blocks = x509.PemConverter.decodeWithHeaders(pem);
    const block = blocks.find((b) => b.type === "PRIVATE KEY");
    if (!block) throw new TypeError(`no "PRIVATE KEY" PEM block (found ${describe(blocks)})`);
    return await crypto.subtle.importKey("pkcs8", block.rawData, KEY_ALGORITHM, true, ["sign"]);
  } catch (e) {
    throw new PkiError("invalid", `Cannot read private key from ${source}: ${errMessage(e)}`, {
      path: source,
    }, { cause: e });
  }
}

/**
 * Decode a PEM or DER certificate.
 * @throws {PkiError} kind `invalid` when it does not parse
 */
export function certificateFromPem(
  pemOrDer: string | BufferSource,
  source = "certificate",
): x509.X509Certificate {
  try {
    return new x509.X509Certificate(pemOrDer);
  } catch (e) {
    throw new PkiError("invalid", `Cannot read certificate from ${source}: ${errMessage(e)}`, {
      path: source,
    }, { cause: e });
  }
}

/**
 * True when `privateKey` is the key of `cert`: sign a nonce and verify it with
 * the certificate's public key. Algorithm-agnostic and cheap (~1 ms).
 */
export async function keyMatchesCertificate(
  privateKey: CryptoKey,
  cert: x509.X509Certificate,
): Promise<boolean> {
  const nonce = crypto.getRandomValues(new Uint8Array(32));
  const signature = await crypto.subtle.sign(SIGNING_ALGORITHM, privateKey, nonce);
  const publicKey = await cert.publicKey.export(KEY_ALGORITHM, ["verify"]);
  return crypto.subtle.verify(SIGNING_ALGORITHM, publicKey, signature, nonce);
}

function describe(blocks: { type: string }[]): string {
  return blocks.length ? blocks.map((b) => `"${b.type}"`).join(", ") : "none";
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
