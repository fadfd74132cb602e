/**
 * The config hash: SHA-256 of a machine config as canonical JSON, so that a
 * client can tell "this config is already in force" (drift detection, an
 * Ansible `changed` flag) without comparing documents itself.
 *
 * Canonical means RFC 8785 (JSON Canonicalization Scheme) over the parsed
 * document, defaults filled in: object members sorted by their UTF-16 code
 * units, no whitespace, strings and numbers as ECMAScript's JSON.stringify
 * writes them (which is what RFC 8785 specifies), members whose value is
 * `undefined` left out. Two texts that differ only in comments, key order,
 * quoting or spelled-out defaults hash the same; the hash changes exactly when
 * {@link configDiff} finds a difference. docs/decisions.md says why not the
 * YAML bytes.
 *
 * @module
 */
import { createHash } from "node:crypto";

/**
 * `value` as RFC 8785 canonical JSON.
 * @throws TypeError for what JSON cannot hold (a function, a bigint, NaN, a cycle)
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

/** SHA-256 (lowercase hex) of `config`'s {@link canonicalJson} in UTF-8. */
export function configSha256(config: unknown): string {
  return createHash("sha256").update(canonicalJson(config), "utf8").digest("hex");
}

function write(v: unknown, seen: Set<object>): string {
  if (v === null || typeof v === "boolean" || typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new TypeError(`Cannot hash a config holding the number ${v}`);
    return JSON.stringify(v);
  }
  if (typeof v !== "object") throw new TypeError(`Cannot hash a config holding a ${typeof v}`);
  if (seen.has(v)) throw new TypeError("Cannot hash a config that refers to itself");
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      // JSON.stringify writes an undefined item as null; so does JCS.
      return `[${v.map((x) => x === undefined ? "null" : write(x, seen)).join(",")}]`;
    }
    const obj = v as Record<string, unknown>;
    const members = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${write(obj[k], seen)}`);
    return `{${members.join(",")}}`;
  } finally {
    seen.delete(v);
  }
}
