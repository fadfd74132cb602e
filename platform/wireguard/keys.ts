/**
 * WireGuard key arithmetic in the runtime's WebCrypto (X25519), so the fake
 * backend reports the same public key `wg` would and tests need no `wg genkey`.
 * @module
 */

// PKCS#8 prefix of a raw X25519 private key (RFC 8410).
const PKCS8_X25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e];
const OCTETS = [0x04, 0x22, 0x04, 0x20];

/**
 * The public key of a base64 private key (what `wg pubkey` prints).
 * @throws TypeError when `privateKey` is not 32 bytes of base64.
 */
export async function publicKeyOf(privateKey: string): Promise<string> {
  const raw = fromBase64(privateKey);
  const key = await crypto.subtle.importKey(
    "pkcs8",
    new Uint8Array([...PKCS8_X25519, ...OCTETS, ...raw]),
    { name: "X25519" },
    true,
    ["deriveBits"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", key);
  return toBase64(fromBase64Url(jwk.x!));
}

/** True for 32 bytes of standard base64, the only key form `wg` accepts. */
export function isKeyText(s: string): boolean {
  return /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(s);
}

/** A new private key (`wg genkey`): 32 random bytes, clamped as X25519 wants. */
export function generatePrivateKey(): string {
  const k = crypto.getRandomValues(new Uint8Array(32));
  k[0] &= 248;
  k[31] = (k[31] & 127) | 64;
  return toBase64(k);
}

function fromBase64(s: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    throw new TypeError("a WireGuard key is not base64");
  }
  if (bin.length !== 32) throw new TypeError("a WireGuard key is not 32 bytes");
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function fromBase64Url(s: string): Uint8Array {
  const b = s.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(b + "=".repeat((4 - b.length % 4) % 4)), (c) => c.charCodeAt(0));
}

function toBase64(b: Uint8Array): string {
  return btoa(String.fromCharCode(...b));
}
