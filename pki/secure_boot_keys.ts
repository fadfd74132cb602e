/**
 * The node owner's UEFI Secure Boot keys: a Platform Key (PK), a Key
 * Exchange Key (KEK) and a signature-database key (db), each a self-signed
 * RSA-2048/SHA-256 X.509 certificate and its key. RSA-2048 because it is
 * the one key type every firmware's Authenticode check accepts (OVMF, and
 * the PCs and boards an operator enrolls them on); the db key signs the
 * boot loader and each slot's Unified Kernel Image, the KEK signs db
 * updates, the PK signs KEK updates (issue 28, docs/secure-boot.md).
 * @module
 */
import { x509 } from "./x509_provider.ts";
import { randomSerialNumber } from "./keyed_certificate.ts";
import { PkiError } from "./pki_error.ts";

/** The three keys, in the order they are enrolled last to first. */
export const SECURE_BOOT_KEY_NAMES = ["PK", "KEK", "db"] as const;
export type SecureBootKeyName = typeof SECURE_BOOT_KEY_NAMES[number];

/** One Secure Boot key: its certificate and its PKCS#8 private key, both PEM. */
export interface SecureBootKey {
  certPem: string;
  keyPem: string;
}

/** The owner's keys, by name. */
export type SecureBootKeys = Record<SecureBootKeyName, SecureBootKey>;

const RSA: RsaHashedKeyGenParams = {
  name: "RSASSA-PKCS1-v1_5",
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: "SHA-256",
};

/** 20 years: firmware does not check expiry, but tools that inspect the db do. */
const LIFETIME_MS = 20 * 365 * 24 * 3600 * 1000;

/** Generate a PK, a KEK and a db key named after `owner` (the fleet or the site). */
export async function generateSecureBootKeys(
  owner: string,
  now = new Date(),
): Promise<SecureBootKeys> {
  const out: Partial<SecureBootKeys> = {};
  for (const name of SECURE_BOOT_KEY_NAMES) {
    const keys = await crypto.subtle.generateKey(RSA, true, ["sign", "verify"]);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerialNumber(),
      name: [{ O: [owner] }, { CN: [`${owner} Secure Boot ${name}`] }],
      notBefore: now,
      notAfter: new Date(now.getTime() + LIFETIME_MS),
      keys,
      signingAlgorithm: RSA,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const der = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
    out[name] = {
      certPem: cert.toString("pem"),
      keyPem: x509.PemConverter.encode(der, "PRIVATE KEY"),
    };
  }
  return out as SecureBootKeys;
}

/** The files a key set lives in: `<name>.crt` and `<name>.key` in one directory. */
export function secureBootKeyFiles(name: SecureBootKeyName): { cert: string; key: string } {
  return { cert: `${name}.crt`, key: `${name}.key` };
}

/**
 * Read a key set written by `machinectl gen secureboot-keys`: each
 * certificate must be RSA and its key must sign what the certificate verifies.
 * @throws PkiError invalid or key_mismatch naming the file.
 */
export async function loadSecureBootKeys(
  read: (file: string) => Promise<string>,
): Promise<SecureBootKeys> {
  const out: Partial<SecureBootKeys> = {};
  for (const name of SECURE_BOOT_KEY_NAMES) {
    const files = secureBootKeyFiles(name);
    const key = { certPem: await read(files.cert), keyPem: await read(files.key) };
    await checkPair(name, key);
    out[name] = key;
  }
  return out as SecureBootKeys;
}

async function checkPair(name: SecureBootKeyName, k: SecureBootKey): Promise<void> {
  const files = secureBootKeyFiles(name);
  let cert: x509.X509Certificate;
  let priv: CryptoKey;
  try {
    cert = new x509.X509Certificate(k.certPem);
    const block = x509.PemConverter.decodeWithHeaders(k.keyPem).find((b) =>
      b.type === "PRIVATE KEY"
    );
    if (!block) throw new TypeError('no "PRIVATE KEY" PEM block');
    priv = await crypto.subtle.importKey("pkcs8", block.rawData, RSA, false, ["sign"]);
  } catch (e) {
    throw new PkiError("invalid", `Secure Boot ${name}: ${files.cert}/${files.key}: ${msg(e)}`, {
      path: files.key,
    }, { cause: e });
  }
  const probe = new TextEncoder().encode("machined secure boot key check");
  const signature = await crypto.subtle.sign(RSA, priv, probe);
  const pub = await cert.publicKey.export(RSA, ["verify"]);
  if (!(await crypto.subtle.verify(RSA, pub, signature, probe))) {
    throw new PkiError(
      "key_mismatch",
      `Secure Boot ${name}: ${files.key} is not ${files.cert}'s key`,
      {
        path: files.key,
      },
    );
  }
}

function msg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
