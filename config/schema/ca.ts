/**
 * `machine.ca`: the node CA, embedded by `machinectl gen config` so the node
 * serves the API with a certificate its operators' client configs trust.
 * Only the PEM shape is checked here; pki/ checks that the key fits the
 * certificate when it loads them.
 *
 * @module
 */
import * as v from "valibot";
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
});

/** A parsed `machine.ca`. */
export type CaConfig = v.InferOutput<typeof CaSchema>;
