/**
 * Deterministic GUIDs for the image's GPT: a random GUID would make two builds
 * of the same inputs differ, and the imager promises byte-identical images.
 */

/**
 * A stable version-4-shaped GUID (lowercase, as platform/block writes GUIDs)
 * derived from `seed`, so that the same inputs give the same image bytes.
 *
 * @example
 * ```ts
 * const diskGuid = await guidFromSeed(`machined-disk:${fingerprint}`);
 * ```
 */
export async function guidFromSeed(seed: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed)),
  );
  const b = digest.slice(0, 16);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
