/**
 * The secrets bundle (like Talos's `secrets.yaml`): the node CA's certificate
 * and key, kept by the operator after `machinectl gen config` so more client
 * configs can be issued later. Whoever holds it is admin of the node.
 *
 * ```yaml
 * version: v1
 * certs:
 *   ca:
 *     crt: |
 *       -----BEGIN CERTIFICATE-----
 *     key: |
 *       -----BEGIN PRIVATE KEY-----
 * ```
 *
 * @module
 */
import { parse, stringify } from "yaml";
import * as v from "valibot";
import { loadCertificateAuthority } from "./certificate_authority.ts";
import type { CertificateAuthority } from "./keyed_certificate.ts";
import { writeFileAtomic } from "./atomic_write.ts";
import { PkiError } from "./pki_error.ts";

/** The secrets a node bundle is generated from. */
export interface SecretsBundle {
  readonly ca: CertificateAuthority;
}

const SECRETS_VERSION = "v1";

const SecretsSchema = v.object({
  version: v.literal(SECRETS_VERSION),
  certs: v.object({
    ca: v.object({ crt: v.pipe(v.string(), v.nonEmpty()), key: v.pipe(v.string(), v.nonEmpty()) }),
  }),
});

/** Render a bundle as YAML text. Pure. */
export function stringifySecretsBundle(bundle: SecretsBundle): string {
  return stringify({
    version: SECRETS_VERSION,
    certs: { ca: { crt: bundle.ca.certPem, key: bundle.ca.keyPem } },
  });
}

/**
 * Parse YAML text into a bundle, checking that the CA key fits its certificate.
 * @throws {PkiError} `invalid` for bad YAML or shape, `key_mismatch` for a foreign key
 */
export async function parseSecretsBundle(
  text: string,
  source = "secrets bundle",
): Promise<SecretsBundle> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new PkiError("invalid", `Cannot parse ${source} as YAML`, { path: source }, { cause: e });
  }
  const result = v.safeParse(SecretsSchema, doc);
  if (!result.success) {
    const issues = result.issues.map((i) => `${v.getDotPath(i) ?? "(root)"}: ${i.message}`);
    throw new PkiError("invalid", `Invalid ${source}: ${issues.join("; ")}`, { path: source });
  }
  const { crt, key } = result.output.certs.ca;
  return { ca: await loadCertificateAuthority(crt, key, source) };
}

/**
 * Read a secrets bundle file.
 * @throws {PkiError} as {@link parseSecretsBundle}; Deno.errors.NotFound when absent
 */
export async function loadSecretsBundle(path: string): Promise<SecretsBundle> {
  return parseSecretsBundle(await Deno.readTextFile(path), path);
}

/** Write a secrets bundle file atomically with mode 0600. */
export async function writeSecretsBundle(path: string, bundle: SecretsBundle): Promise<void> {
  await writeFileAtomic(path, stringifySecretsBundle(bundle), { mode: 0o600 });
}
