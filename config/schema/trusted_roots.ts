/**
 * `machine.trusted_roots`: CA certificates the node trusts besides the image's system bundle
 * (a private registry's CA, a TLS-inspecting proxy). Each entry must be one PEM certificate of
 * a CA (basicConstraints CA), or a self-signed server certificate trusted as itself, that has
 * not expired when the config is validated. Entries with
 * the same SHA-256 fingerprint are refused in `semantic_checks.ts`, naming both.
 *
 * @module
 */
import { createHash, X509Certificate } from "node:crypto";
import * as v from "valibot";
import { certificateNameProblem, x509 } from "../../pki/mod.ts";
import { mapping } from "./mapping.ts";
import { checkWithHint } from "./hints.ts";

/** At most this many trusted roots: the bundle is read on every machined HTTPS request. */
export const MAX_TRUSTED_ROOTS = 64;
/** One entry's PEM is refused past this size, before it is decoded (a CA is ~1–2 KiB). */
export const MAX_TRUSTED_ROOT_PEM_BYTES = 16 * 1024;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END CERTIFICATE-----/g;

/** What a valid trusted root is, as the status shows it. */
export interface CaCertificateFacts {
  /** RFC 4514 subject. */
  readonly subject: string;
  /** `SHA256:` and the lower-case hex SHA-256 of the DER, as pki prints fingerprints. */
  readonly fingerprint: string;
  readonly notAfter: Date;
  /** The PEM re-encoded from the DER (one block, LF line ends). */
  readonly pem: string;
}

/** The outcome of {@link inspectCaPem}: the facts, or why the text is not a usable CA. */
export type CaInspection =
  | { readonly ok: true; readonly facts: CaCertificateFacts }
  | { readonly ok: false; readonly problem: string };

/**
 * Parses one PEM CA certificate and checks it may be trusted at `now`. Pure and synchronous
 * (valibot checks are), so the fingerprint is computed with node:crypto. Never throws.
 */
export function inspectCaPem(text: string, now: number = Date.now()): CaInspection {
  if (text.length > MAX_TRUSTED_ROOT_PEM_BYTES) {
    return fail(`${text.length} bytes is more than ${MAX_TRUSTED_ROOT_PEM_BYTES}`);
  }
  const blocks = [...text.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) return fail("no PEM CERTIFICATE block");
  if (blocks.length > 1) return fail(`${blocks.length} certificates; give each its own entry`);
  if (text.replace(PEM_BLOCK, "").trim() !== "") return fail("text outside the PEM block");
  let cert: x509.X509Certificate;
  let der: Uint8Array<ArrayBuffer>;
  try {
    der = Uint8Array.from(atob(blocks[0][1].replace(/[\r\n]/g, "")), (c) => c.charCodeAt(0));
    cert = new x509.X509Certificate(der);
  } catch (e) {
    return fail(`not an X.509 certificate (${(e as Error).message})`);
  }
  const constraints = cert.getExtension(x509.BasicConstraintsExtension);
  if (!constraints?.ca && !selfSigned(cert, der)) {
    return fail(
      `${JSON.stringify(cert.subject)} is not a CA (basicConstraints CA is not set) ` +
        "and not self-signed",
    );
  }
  if (cert.notAfter.getTime() <= now) {
    return fail(`${JSON.stringify(cert.subject)} expired on ${cert.notAfter.toISOString()}`);
  }
  const hex = createHash("sha256").update(der).digest("hex");
  return {
    ok: true,
    facts: {
      subject: cert.subject,
      fingerprint: `SHA256:${hex}`,
      notAfter: cert.notAfter,
      pem: cert.toString("pem").replace(/\r\n/g, "\n"),
    },
  };
}

/**
 * A self-signed server certificate (issuer = subject, signed by its own key) is trusted as
 * itself: rustls, Go and OpenSSL accept it as a server's certificate when it is in the bundle,
 * while rustls refuses a self-signed one that says CA:TRUE (`CaUsedAsEndEntity`).
 */
function selfSigned(cert: x509.X509Certificate, der: Uint8Array<ArrayBuffer>): boolean {
  if (cert.subject !== cert.issuer) return false;
  try {
    const node = new X509Certificate(der);
    return node.verify(node.publicKey);
  } catch {
    return false;
  }
}

function fail(problem: string): CaInspection {
  return { ok: false, problem };
}

const Pem = v.pipe(
  v.string("expected a PEM certificate as a string"),
  checkWithHint(
    (s: string) => inspectCaPem(s).ok,
    (issue) => {
      const r = inspectCaPem(issue.input);
      return `not a trusted root: ${r.ok ? "" : r.problem}`;
    },
    () =>
      "one CA certificate per entry: the whole PEM block, BEGIN and END lines included, after a YAML | (a literal block)",
  ),
  v.metadata({ docType: "PEM certificate" }),
);

const Name = v.pipe(
  v.string("expected a name"),
  v.check(
    (s: string) => certificateNameProblem(s) === undefined,
    (issue) => `invalid trusted root name: ${certificateNameProblem(issue.input)}`,
  ),
);

/** One trusted root. */
export const TrustedRootSchema = mapping({
  name: v.pipe(
    Name,
    v.description("A label for status and errors; unique, no control characters."),
    v.examples(["registry-ca"]),
  ),
  pem: v.pipe(
    Pem,
    v.description(
      "One CA certificate (basicConstraints CA), or a self-signed server certificate trusted as itself, PEM. Refused when expired at validation time.",
    ),
  ),
});

/** `machine.trusted_roots`. */
export const TrustedRootsSchema = v.pipe(
  v.array(TrustedRootSchema, "expected a list of trusted roots"),
  v.maxLength(MAX_TRUSTED_ROOTS, `at most ${MAX_TRUSTED_ROOTS} trusted roots`),
  v.description(
    "CA certificates added to the image's system bundle. The node writes one bundle that services see through SSL_CERT_FILE (and DENO_CERT), and machined's own HTTPS clients use; see docs/hardening.md.",
  ),
);

/** A parsed trusted root. */
export type TrustedRootConfig = v.InferOutput<typeof TrustedRootSchema>;
