/**
 * JSON and YAML as machinectl prints them: documents for scripts that a
 * terminal may still show, so no unsafe character (terminal_text.ts) appears
 * raw, and each is escaped in the format's own syntax so the document still
 * parses to the node's exact value.
 *
 * - JSON: JSON.stringify escapes C0 controls (`\u001b`, `\n`) but leaves DEL,
 *   C1, bidi, zero-width and U+2028/U+2029 raw; those can only stand inside
 *   string literals, where `\uNNNN` (a surrogate pair above the BMP) means
 *   the same character.
 * - YAML: every string holding an unsafe character is written double-quoted
 *   on one line (never a block scalar, which would put a node's newline at
 *   the start of a printed line, never folded); the yaml library escapes C0
 *   there (`\e`, `\n`) and the rest is written as `\xNN`, `\uNNNN` or
 *   `\UNNNNNNNN`, all valid in a double-quoted YAML scalar.
 *
 * @module
 */
import { Document, visit } from "yaml";
import { hasUnsafe } from "./terminal_text.ts";

/** Unsafe characters JSON.stringify and the yaml library leave raw (C0 they escape). */
const LEFT_RAW = /(?![\u200c\u200d])[\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

/** JSON.stringify with what it leaves raw escaped as `\uNNNN`. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(LEFT_RAW, jsonEscape);
}

/** YAML (no trailing newline) with every unsafe character escaped inside double quotes. */
export function toYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === "string" && hasUnsafe(node.value)) node.type = "QUOTE_DOUBLE";
    },
  });
  const text = doc.toString({ lineWidth: 0, doubleQuotedMinMultiLineLength: Infinity });
  return text.replace(LEFT_RAW, yamlEscape).trimEnd();
}

function jsonEscape(ch: string): string {
  return [...ch].length === 1 && ch.length === 2
    ? hex4(ch.charCodeAt(0)) + hex4(ch.charCodeAt(1))
    : hex4(ch.charCodeAt(0));
}

function yamlEscape(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, "0")}`;
  if (cp <= 0xffff) return hex4(cp);
  return `\\U${cp.toString(16).padStart(8, "0")}`;
}

function hex4(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}
