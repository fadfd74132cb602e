/**
 * What a client certificate's name (its CN) may hold. The name is printed by
 * machinectl, written to audit lines and carried in identity headers between
 * apid and machined, so characters a terminal or a log reader would act on
 * are refused when the certificate is issued rather than escaped forever
 * after: control characters (C0, DEL, C1), format characters (bidi
 * overrides and isolates, zero-width, BOM), line and paragraph separators,
 * and spaces other than U+0020 (NBSP and its kind look like a space but are
 * another name). Letters of any script stay allowed (`älice`).
 *
 * @module
 */

/** X.509's upper bound for a common name (RFC 5280 ub-common-name). */
export const MAX_CERTIFICATE_NAME_LENGTH = 64;

/** Characters never legitimate in a name (see the module doc). */
const REFUSED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/u;

/**
 * Why `name` cannot be a certificate name, or undefined when it can. The
 * reason quotes the name with JSON.stringify and names the first refused
 * character by code point (`U+001B`), so it can be shown as it is.
 */
export function certificateNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "is empty";
  const quoted = JSON.stringify(name);
  const chars = [...name];
  if (chars.length > MAX_CERTIFICATE_NAME_LENGTH) {
    return `${quoted} is ${chars.length} characters, more than ${MAX_CERTIFICATE_NAME_LENGTH}`;
  }
  const at = chars.findIndex((c) => c !== " " && REFUSED.test(c));
  if (at >= 0) {
    const cp = chars[at].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    return `${quoted} holds U+${cp} at character ${at + 1}: a certificate name takes no ` +
      `control, format (bidi, zero-width) or separator characters`;
  }
  if (name !== name.trim()) return `${quoted} starts or ends with a space`;
  return undefined;
}
