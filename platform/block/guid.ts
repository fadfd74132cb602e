/**
 * GUIDs in GPT's mixed-endian layout: the first three fields little-endian,
 * the last two as bytes. Text is lowercase 8-4-4-4-12.
 * @module
 */

const GUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Encode a GUID string to its 16 on-disk bytes. @throws TypeError when malformed. */
export function guidToBytes(guid: string): Uint8Array {
  if (!GUID_RE.test(guid)) throw new TypeError(`Malformed GUID ${JSON.stringify(guid)}`);
  const hex = guid.replaceAll("-", "");
  const b = new Uint8Array(16);
  for (let i = 0; i < 16; i++) b[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  return b;
}

/** Decode 16 on-disk bytes to a lowercase GUID string. */
export function bytesToGuid(bytes: Uint8Array): string {
  const b = bytes.slice(0, 16);
  b.subarray(0, 4).reverse();
  b.subarray(4, 6).reverse();
  b.subarray(6, 8).reverse();
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A random (version 4) GUID. */
export function randomGuid(): string {
  return crypto.randomUUID();
}
