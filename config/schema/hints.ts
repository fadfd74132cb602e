/**
 * Hints attached to schema checks. A valibot issue carries the check's
 * requirement function; this registry maps that function to a function that
 * computes a hint ("did you mean ...") from the offending input, so the
 * message stays a plain statement and the hint travels separately into
 * {@link ConfigError.hint}.
 *
 * @module
 */
import * as v from "valibot";

/** Computes an optional hint for a rejected input. */
export type HintFn = (input: unknown) => string | undefined;

const hints = new WeakMap<object, HintFn>();

/** The hint registered for a check's requirement, if any. */
export function hintFor(requirement: unknown, input: unknown): string | undefined {
  if (typeof requirement !== "function") return undefined;
  return hints.get(requirement)?.(input);
}

/**
 * A `v.check` whose failures carry a hint computed from the input.
 *
 * @example
 * ```ts
 * checkWithHint((s: string) => s === s.toLowerCase(), "must be lowercase", (s) =>
 *   `write "${String(s).toLowerCase()}"`);
 * ```
 */
export function checkWithHint<T>(
  requirement: (input: T) => boolean,
  message: string | ((issue: v.CheckIssue<T>) => string),
  hint: HintFn,
): v.CheckAction<T, string | ((issue: v.CheckIssue<T>) => string)> {
  hints.set(requirement, hint);
  return v.check(requirement, message);
}

/**
 * Quotes a rejected input for messages the way JSON would, with what
 * JSON.stringify leaves raw (DEL, C1, bidi and zero-width format characters,
 * U+2028/U+2029) escaped as `\uNNNN` too: a rejected value is shown to
 * whoever reads the error, on whatever prints it, and must not act on it.
 */
export function quote(input: unknown): string {
  if (typeof input !== "string") return String(input);
  return JSON.stringify(input).replace(
    /(?![\u200c\u200d])[\x7f-\x9f\p{Cf}\u2028\u2029]/gu,
    (ch) =>
      [...ch].length === 1 && ch.length === 2
        ? `\\u${ch.charCodeAt(0).toString(16)}\\u${ch.charCodeAt(1).toString(16)}`
        : `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
