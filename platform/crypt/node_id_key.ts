/**
 * The `nodeid` key kind: HKDF-SHA256 over the board's SMBIOS UUID, salted
 * with a fixed label and bound to the volume's label, so STATE and EPHEMERAL
 * get different keys and no key is stored anywhere. Anyone who has the disk
 * and reads the board's UUID (it is not secret) can derive it: this kind
 * protects against reading a disk taken away from its board, and gives
 * crypto-erase (destroying the header destroys the data), nothing more.
 * @module
 */

/** Where Linux exposes the SMBIOS system UUID (root-only). */
export const SMBIOS_UUID_PATH = "/sys/class/dmi/id/product_uuid";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Boards that ship without a UUID report one of these; a key from them protects nothing. */
const PLACEHOLDERS = new Set([
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "03000200-0400-0500-0006-000700080009",
]);

/**
 * Derive the 32-byte key of `volume` from `uuid`.
 * @throws RangeError when `uuid` is not a UUID or is a known placeholder.
 */
export async function nodeIdKey(uuid: string, volume: string): Promise<Uint8Array> {
  const u = uuid.trim().toLowerCase();
  if (!UUID.test(u)) {
    throw new RangeError(`SMBIOS UUID ${JSON.stringify(u.slice(0, 40))} is not a UUID`);
  }
  if (PLACEHOLDERS.has(u)) {
    throw new RangeError(`SMBIOS UUID ${u} is a placeholder, not an identity`);
  }
  const enc = new TextEncoder();
  const ikm = await crypto.subtle.importKey("raw", enc.encode(u), "HKDF", false, ["deriveBits"]);
  const bits = await crypto.subtle.deriveBits(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: enc.encode("machined nodeid volume key v1"),
      info: enc.encode(`volume:${volume}`),
    },
    ikm,
    256,
  );
  return new Uint8Array(bits);
}

/**
 * Read the SMBIOS UUID.
 * @throws Deno.errors.NotFound on a machine without DMI (some ARM boards, containers).
 */
export async function readSmbiosUuid(path = SMBIOS_UUID_PATH): Promise<string> {
  return (await Deno.readTextFile(path)).trim();
}
