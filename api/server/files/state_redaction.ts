/**
 * Secrets in files under /system/state, redacted before FileRead returns
 * them, reusing the API's resource redaction (redaction.ts) for the machine
 * config. The rules, for every role unless said:
 *
 * - `config.yaml` (the machine config): as MachineConfig over Get — the CA key
 *   for everyone, service env values for readers. Unparsable: refused.
 * - Any PEM private key block, in any file: replaced by `(redacted)`.
 * - Other YAML and JSON files: values of keys named like a secret (`key`,
 *   `*_key`, `*Key`, `token`, `secret`, `password`) replaced.
 * - Anything else (binary, unknown text): a reader is refused (no rule can
 *   vouch for it); operators and admins get it with PEM keys redacted.
 */
import { PermissionDeniedError } from "../../errors/mod.ts";
import { parse, stringify } from "yaml";
import type { MachineConfigSpec } from "../../../resources/mod.ts";
import { REDACTED, redactMachineConfig, type Visibility } from "../../auth/mod.ts";

/** The content a caller may see, and whether anything was replaced. */
export interface Redacted {
  readonly bytes: Uint8Array;
  readonly redacted: boolean;
}

const PEM_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----/g;
const SECRET_KEY = /^(key|token|secret|password|.*_key|.*Key|.*_token|.*_secret|.*_password)$/;

/**
 * `bytes` of the file at `rel` (relative to /system/state) as visibility `v`
 * may see it. Pure.
 * @throws PermissionDeniedError when no rule can vouch for the file for a reader,
 *   or config.yaml does not parse.
 */
export function redactStateFile(rel: string, bytes: Uint8Array, v: Visibility): Redacted {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const name = rel.split("/").pop() ?? rel;
  if (rel === "config.yaml") return encode(redactConfigText(text, v), text);
  if (/\.(ya?ml|json)$/.test(name)) return encode(redactStructured(name, text, rel), text);
  const isText = !text.includes("\uFFFD") && !text.includes("\0");
  if (isText && /\.(pem|crt|key|csr|txt|log)$/.test(name)) return encode(redactPem(text), text);
  if (v === "privileged") {
    return isText ? encode(redactPem(text), text) : { bytes, redacted: false };
  }
  throw new PermissionDeniedError(
    `/system/state/${rel}: no redaction rule vouches for this file, so a reader may not read it ` +
      `(os:operator or higher may)`,
    { context: { path: `/system/state/${rel}` } },
  );
}

function encode(out: string, original: string): Redacted {
  return { bytes: new TextEncoder().encode(out), redacted: out !== original };
}

/** PEM private key blocks replaced by {@link REDACTED}. */
export function redactPem(text: string): string {
  return text.replace(PEM_KEY, REDACTED);
}

function redactConfigText(text: string, v: Visibility): string {
  let config: unknown;
  try {
    config = parse(text);
  } catch (e) {
    throw new PermissionDeniedError(
      `/system/state/config.yaml does not parse, so it cannot be redacted: ${(e as Error).message}`,
      { context: { path: "/system/state/config.yaml" }, cause: e },
    );
  }
  if (typeof config !== "object" || config === null) return redactPem(text);
  const c = config as MachineConfigSpec["config"];
  const input: MachineConfigSpec = { source: "file", config: { ...c, machine: c.machine ?? {} } };
  const spec = redactMachineConfig(input, v);
  return redactPem(spec === input ? text : stringify(spec.config));
}

function redactStructured(name: string, text: string, rel: string): string {
  let doc: unknown;
  try {
    doc = name.endsWith(".json") ? JSON.parse(text) : parse(text);
  } catch (e) {
    throw new PermissionDeniedError(
      `/system/state/${rel} does not parse, so it cannot be redacted: ${(e as Error).message}`,
      { context: { path: `/system/state/${rel}` }, cause: e },
    );
  }
  const out = walk(doc);
  if (JSON.stringify(out) === JSON.stringify(doc)) return redactPem(text);
  return name.endsWith(".json") ? JSON.stringify(out, null, 2) + "\n" : stringify(out);
}

function walk(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(walk);
  if (typeof v === "string") return redactPem(v);
  if (typeof v !== "object" || v === null) return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, SECRET_KEY.test(k) && x !== null ? REDACTED : walk(x)]),
  );
}
