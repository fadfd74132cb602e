/**
 * `machine.ca`: the node CA, embedded by `machinectl gen config` so the node
 * serves the API with a certificate its operators' client configs trust.
 * Only the PEM shape of `crt` and `key` is checked here; pki/ checks that the
 * key fits the certificate when it loads them. `accepted` (extra CAs trusted
 * for client certificates during a CA rotation, docs/api.md, "Rotating the CA") is checked in
 * full here, since nothing loads it later: each a CA certificate, unexpired,
 * listed once.
 *
 * @module
 */
import * as v from "valibot";
import { x509 } from "../../pki/mod.ts";
import { mapping } from "./mapping.ts";
import { checkWithHint } from "./hints.ts";

const PEM_CERT =
  /^\s*-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\s*$/;
const PEM_KEY =
  /^\s*-----BEGIN (EC |RSA )?PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END (EC |RSA )?PRIVATE KEY-----\s*$/;

function pem(what: string, pattern: RegExp) {
  return v.pipe(
    v.string(`expected a PEM ${what} as a string`),
    checkWithHint(
      (s: string) => pattern.test(s),
      `not a PEM ${what}`,
      // No quotes: an error at a secret path has its quoted text redacted.
      () =>
        "paste the whole PEM block, BEGIN and END lines included, after a YAML | (a literal block)",
    ),
    v.metadata({ docType: `PEM ${what}` }),
  );
}

/** At most this many extra CAs in `machine.ca.accepted` (a rotation needs one). */
export const MAX_ACCEPTED_CAS = 4;

/** Why a PEM block cannot be an accepted CA now, or undefined when it can. */
export function acceptedCaProblem(pem: string, now = new Date()): string | undefined {
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(pem);
  } catch {
    return "cannot parse the certificate";
  }
  if (!cert.getExtension(x509.BasicConstraintsExtension)?.ca) {
    return `certificate "${cert.subject}" is not a CA`;
  }
  if (now > cert.notAfter) return `CA "${cert.subject}" expired at ${cert.notAfter.toISOString()}`;
  return undefined;
}

const AcceptedCa = v.pipe(
  pem("certificate", PEM_CERT),
  checkWithHint(
    (s: string) => acceptedCaProblem(s) === undefined,
    (issue) => `not an accepted CA: ${acceptedCaProblem(String(issue.input)) ?? "invalid"}`,
    () => "list CA certificates that are still valid (machinectl rotate-ca writes them)",
  ),
);

/** `machine.ca`. */
export const CaSchema = mapping({
  crt: v.pipe(
    pem("certificate", PEM_CERT),
    v.description("The CA certificate; clients and the API server trust it."),
  ),
  key: v.pipe(
    pem("private key", PEM_KEY),
    v.description(
      "The CA private key; the node issues its API server certificate with it. Keep the file 0600. Secret: shown as `(redacted)`, never quoted in errors.",
    ),
    v.metadata({ secret: true }),
  ),
  accepted: v.optional(
    v.pipe(
      v.array(AcceptedCa, "expected a list of PEM CA certificates"),
      v.maxLength(MAX_ACCEPTED_CAS, `at most ${MAX_ACCEPTED_CAS} accepted CAs`),
      v.check(
        (list: string[]) => new Set(list.map((s) => s.trim())).size === list.length,
        "each accepted CA is listed once",
      ),
      v.description(
        "More CA certificates whose client certificates the API accepts, beside `crt`'s: held during a CA rotation (`machinectl rotate-ca`; docs/api.md, Rotating the CA) so that clients of the old and the new CA both get in. Certificates only, never keys; each a CA, unexpired, listed once. The server certificate is always issued by `crt`.",
      ),
    ),
  ),
});

/** A parsed `machine.ca`. */
export type CaConfig = v.InferOutput<typeof CaSchema>;
