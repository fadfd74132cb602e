/**
 * Secret fields of the machine config, marked once in the schema with
 * `v.metadata({ secret: true })` (today `machine.ca.key` and the static
 * passphrases of `machine.install.encryption`), and the redaction
 * of them wherever the config or its errors flow:
 *
 * - {@link redactConfigSecrets}: the parsed config as readers may see it (the
 *   MachineConfig resource), with each secret replaced by `(redacted)`;
 * - {@link redactConfigError}: an error at, above or below a secret path never
 *   quotes the offending value; and no error, whatever its path, quotes
 *   anything holding PEM private key material (`PRIVATE KEY`), be it a value,
 *   a key or a hint. Quoted values are also cut to {@link MAX_QUOTED_CHARS}.
 *
 * @module
 */
import { ConfigError, type PathSegment } from "./config_error.ts";
import { type MachineConfig, MachineConfigSchema } from "./schema/machine_config.ts";
import { unwrap } from "./schema_walk.ts";

/** What stands where a secret was removed. */
export const REDACTED = "(redacted)";

/** A value quoted in an error is cut to this many characters. */
export const MAX_QUOTED_CHARS = 64;

/** A path to a secret; `"*"` stands for any list index or map key. */
export type SecretPath = readonly string[];

/** Every secret path in a schema, found by its `secret` metadata. */
export function secretPaths(schema: unknown = MachineConfigSchema): SecretPath[] {
  const out: SecretPath[] = [];
  const walk = (s: unknown, path: string[]) => {
    const u = unwrap(s);
    if (u.secret) {
      out.push(path);
      return;
    }
    const b = u.base;
    for (const [k, child] of Object.entries(b.entries ?? {})) walk(child, [...path, k]);
    if (b.type === "array" && b.item) walk(b.item, [...path, "*"]);
    if (b.type === "record" && b.value) walk(b.value, [...path, "*"]);
  };
  walk(schema, []);
  return out;
}

/** The secret paths of the machine config schema. */
export const SECRET_PATHS: readonly SecretPath[] = secretPaths();

/** A copy of `config` with every secret replaced by {@link REDACTED}; `config` is untouched. */
export function redactConfigSecrets(config: MachineConfig): MachineConfig {
  let out: unknown = config;
  for (const path of SECRET_PATHS) out = redactAt(out, path);
  return out as MachineConfig;
}

function redactAt(value: unknown, path: SecretPath): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (path.length === 0) return REDACTED;
  const [head, ...rest] = path;
  if (Array.isArray(value)) {
    return head === "*" ? value.map((x) => redactAt(x, rest)) : value;
  }
  const obj = value as Record<string, unknown>;
  const keys = head === "*" ? Object.keys(obj) : Object.hasOwn(obj, head) ? [head] : [];
  if (keys.length === 0) return value;
  const copy: Record<string, unknown> = { ...obj };
  for (const k of keys) {
    copy[k] = rest.length === 0
      ? (obj[k] === undefined ? undefined : REDACTED)
      : redactAt(obj[k], rest);
  }
  return copy;
}

/** True when `segments` is a secret path, lies inside one, or holds one (e.g. `machine.ca`). */
export function touchesSecret(segments: readonly PathSegment[]): boolean {
  return SECRET_PATHS.some((p) => {
    const n = Math.min(p.length, segments.length);
    for (let i = 0; i < n; i++) if (p[i] !== "*" && p[i] !== String(segments[i])) return false;
    return true;
  });
}

const QUOTED = /"(?:[^"\\]|\\.)*"/g;
const PRIVATE_KEY = /PRIVATE KEY/i;
const PEM_FRAGMENT = /(?:-+(?:BEGIN |END )?)?(?:[A-Z0-9]+ )*PRIVATE KEY-*/g;
const PEM_BLOCK =
  /-----BEGIN[^\n"]*PRIVATE KEY-----[\s\S]*?(?:-----END[^\n"]*PRIVATE KEY-----|$)/gi;

/**
 * Kinds whose messages may quote the offending value. The others quote key
 * names (unknown, missing) or no input at all (syntax, limit, io); PEM text in
 * them is still removed.
 */
const QUOTES_VALUE = new Set(["type", "value", "semantic"]);

/**
 * `e` with its message, hint and path safe to show a reader (see the module
 * doc). Returns `e` itself when nothing needed changing; a changed error drops
 * its cause, which may carry the same text.
 */
export function redactConfigError(e: ConfigError): ConfigError {
  const secret = touchesSecret(e.segments) && QUOTES_VALUE.has(e.kind);
  const message = scrubText(e.message, secret);
  const hint = e.hint === undefined ? undefined : scrubText(e.hint, secret);
  const segments = e.segments.map((s) =>
    typeof s !== "string"
      ? s
      : PRIVATE_KEY.test(s)
      ? REDACTED
      : s.length > MAX_QUOTED_CHARS
      ? cut(s)
      : s
  );
  const cause = e.cause instanceof Error ? e.cause.message : String(e.cause ?? "");
  const same = message === e.message && hint === e.hint && !PRIVATE_KEY.test(cause) &&
    segments.every((s, i) => s === e.segments[i]);
  if (same) return e;
  const { kind, source, line, column } = e;
  return new ConfigError({ kind, source, segments, line, column, message, hint });
}

/** Redacts every error of a list (see {@link redactConfigError}). */
export function redactConfigErrors(errors: readonly ConfigError[]): ConfigError[] {
  return errors.map(redactConfigError);
}

function scrubText(text: string, secret: boolean): string {
  const quoted = text.replace(QUOTED, (literal) => {
    if (secret || PRIVATE_KEY.test(literal)) return JSON.stringify(REDACTED);
    return literal.length > MAX_QUOTED_CHARS + 2
      ? `${literal.slice(0, MAX_QUOTED_CHARS + 1)}…"`
      : literal;
  });
  // PEM text outside quotes (a library message, an unquoted key) goes too,
  // down to a split header such as "EC PRIVATE KEY-----".
  return quoted.replace(PEM_BLOCK, REDACTED).replace(PEM_FRAGMENT, REDACTED);
}

function cut(s: string): string {
  return `${s.slice(0, MAX_QUOTED_CHARS)}…`;
}
