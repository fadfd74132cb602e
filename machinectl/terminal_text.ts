/**
 * The one escaper for what machinectl prints: every string that came from a
 * node (a service id, an argv, a log line, an event message, an error's
 * grpc-message) is data, and a terminal must never act on it. Characters a
 * terminal or a text renderer would interpret are shown visibly instead:
 *
 * - C0 controls, DEL and C1 controls (`\p{Cc}`): ESC starts an escape
 *   sequence (retitle a tmux pane, clear the screen), CR overwrites a line,
 *   LF forges one, U+009B is a one-byte CSI;
 * - format characters (`\p{Cf}`): bidi embeddings, overrides and isolates
 *   (U+202A–U+202E, U+2066–U+2069, "Trojan Source"), LRM/RLM/ALM, zero-width
 *   space, word joiner, BOM, soft hyphen, invisible operators, tag characters;
 *   except ZWJ and ZWNJ (U+200D, U+200C), which join emoji and some scripts
 *   and cannot move or hide text;
 * - line and paragraph separators (U+2028, U+2029).
 *
 * Shown as `\n`, `\r`, `\t`, `\xNN` up to U+00FF, `\uNNNN` in the BMP and
 * `\u{NNNNN}` above. A backslash is not doubled: a node that prints the text
 * `\x1b` shows `\x1b`, which is harmless, and ordinary log lines (JSON with
 * `\"`) stay as the service wrote them.
 *
 * Two strengths: {@link escapeText} for a field (everything, line breaks
 * included: one field, one line) and {@link escapeLines} for a whole block of
 * output machinectl composed (its own line breaks and tabs kept). Every Io
 * that runMachinectl hands a command is wrapped by {@link escapingIo}, so no
 * output path reaches the terminal without at least escapeLines; fields are
 * escaped where they are placed (tables, `esc` templates) so a node cannot
 * forge a line either.
 *
 * @module
 */
import type { Io } from "./io.ts";

/** What a terminal would act on (see the module doc). Global, for replace. */
const UNSAFE = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/gu;
/** The same without LF and TAB: what may remain in a block machinectl composed. */
const UNSAFE_IN_BLOCK = /(?![\n\t\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/gu;

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** The visible form of one unsafe character: `\n`, `\x1b`, `\u202e`, `\u{e0041}`. */
export function visibleEscape(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const cp = ch.codePointAt(0)!;
  const hex = cp.toString(16);
  if (cp <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (cp <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\u{${hex}}`;
}

/**
 * A field as the terminal may show it: every unsafe character escaped,
 * line breaks and tabs included. Idempotent (its output has nothing left to
 * escape), so escaping twice is harmless.
 */
export function escapeText(s: string): string {
  return s.replace(UNSAFE, visibleEscape);
}

/** A block machinectl composed: its line breaks and tabs kept, anything else unsafe escaped. */
export function escapeLines(s: string): string {
  return s.replace(UNSAFE_IN_BLOCK, visibleEscape);
}

/** Whether `s` holds a character {@link escapeText} would escape. */
export function hasUnsafe(s: string): boolean {
  UNSAFE.lastIndex = 0;
  const found = UNSAFE.test(s);
  UNSAFE.lastIndex = 0;
  return found;
}

/**
 * A template whose literal parts are machinectl's own and whose every
 * interpolation is a field: `esc\`service "${id}": ${state}\``. Values are
 * converted with String() and escaped with {@link escapeText}.
 */
export function esc(parts: TemplateStringsArray, ...values: readonly unknown[]): string {
  let out = parts[0];
  values.forEach((v, i) => out += escapeText(String(v)) + parts[i + 1]);
  return out;
}

/** Clears the screen and homes the cursor before a `--watch` frame (machinectl's own). */
export const CLEAR_SCREEN = "\x1b[H\x1b[2J";

/**
 * `io` with every write escaped by {@link escapeLines}: the last line of
 * defence, so a command that forgets to escape a field still cannot send an
 * escape sequence. `redraw` is the one way to send a control sequence
 * (machinectl's own screen clear), with the frame itself escaped.
 */
export function escapingIo(io: Io): Io {
  if (ESCAPING.has(io)) return io;
  const wrapped: Io = {
    out: (t) => io.out(escapeLines(t)),
    err: (t) => io.err(escapeLines(t)),
    redraw: (t) => io.out(CLEAR_SCREEN + escapeLines(t)),
    ...(io.ask ? { ask: (q: string) => io.ask!(escapeLines(q)) } : {}),
    ...(io.secret ? { secret: (q: string) => io.secret!(escapeLines(q)) } : {}),
  };
  ESCAPING.add(wrapped);
  return wrapped;
}

const ESCAPING = new WeakSet<Io>();
