/**
 * Prints the maintenance certificate's fingerprint where an operator with a
 * serial console or a kernel log reader finds it: the console (machined's
 * stdout) and /dev/kmsg. The line is fixed so tests and scripts can find it:
 * `machined: maintenance mode: API certificate fingerprint SHA256:<hex>`.
 *
 * @module
 */

/** The text before the fingerprint, in both places. */
export const FINGERPRINT_LINE_PREFIX = "machined: maintenance mode: API certificate fingerprint ";

/** Finds the fingerprint in console or kernel log text; the last one wins. */
export function fingerprintFromLog(text: string): string | undefined {
  const all = [...text.matchAll(/API certificate fingerprint (SHA256:[0-9a-f]{64})/g)];
  return all.at(-1)?.[1];
}

/** Writes the line to the console and the kernel log (best effort: never throws). */
export function announceFingerprint(fingerprint: string, kmsgPath = "/dev/kmsg"): void {
  const line = `${FINGERPRINT_LINE_PREFIX}${fingerprint}`;
  console.log(line);
  try {
    Deno.writeTextFileSync(kmsgPath, `<5>${line}\n`, { append: true });
  } catch {
    // Not on a node (dev mode, tests) or no /dev/kmsg: the console has it.
  }
}
