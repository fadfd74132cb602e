/**
 * Shared by the tests that feed a node hostile strings and check what
 * machinectl prints: the payload (an OSC retitle, a screen clear, a line
 * break forging machined's own `[info] audit:` line, a CR, a one-byte CSI, a
 * bidi override) and the assertion that output shows it escaped, never raw.
 */
import { ok } from "node:assert/strict";

/** Everything issue 25 item 4 named, in one string. */
export const EVIL = "x\x1b]0;pwned\x07\x1b[2J\n[info] audit: forged\ry\u009b31m\u202ez";

/** How EVIL must look in each kind of output. */
export const SHOWN = {
  /** Tables, log lines, event lines, messages: terminal_text's visible escapes. */
  text: String.raw`x\x1b]0;pwned\x07\x1b[2J\n[info] audit: forged\ry\x9b31m\u202ez`,
  /** JSON string escapes (same value once parsed). */
  json: String.raw`x\u001b]0;pwned\u0007\u001b[2J\n[info] audit: forged\ry\u009b31m\u202ez`,
  /** YAML double-quoted escapes (same value once parsed). */
  yaml: String.raw`"x\e]0;pwned\a\e[2J\n[info] audit: forged\ry\x9b31m\u202ez"`,
} as const;

/** A character a terminal would act on, other than the line breaks and tabs machinectl writes. */
const RAW = /(?![\n\t\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/u;

/**
 * `out` holds no raw control, format or separator character, no line that
 * starts with the forged `[info] audit:`, and shows EVIL escaped as `style`
 * (`times` times at least).
 */
export function assertEscaped(out: string, style: keyof typeof SHOWN, times = 1): void {
  const raw = RAW.exec(out);
  ok(!raw, `raw U+${raw?.[0].codePointAt(0)?.toString(16)} in ${JSON.stringify(out)}`);
  ok(!/^\s*\[info\] audit: forged/m.test(out), `a forged line in ${JSON.stringify(out)}`);
  const seen = out.split(SHOWN[style]).length - 1;
  ok(seen >= times, `${SHOWN[style]} shown ${seen} times (want ${times}) in:\n${out}`);
}
