/**
 * The node's PKI directory: the CA and the API server's certificate, loaded at
 * boot, created on first boot, and never silently re-keyed. A directory where
 * some files exist and others do not is an error, because generating a new CA
 * next to leftovers would lock out every client that trusts the old one.
 *
 * Layout: `ca.crt`, `ca.key`, `server.crt`, `server.key` (keys 0600).
 *
 * @module
 */
import { join } from "node:path";
import { createCertificateAuthority, loadCertificateAuthority } from "./certificate_authority.ts";
import { certificateFromPem, keyMatchesCertificate, privateKeyFromPem } from "./key_pem.ts";
import type { CertificateAuthority, KeyedCertificate } from "./keyed_certificate.ts";
import { pathExists, writeFileAtomic } from "./atomic_write.ts";
import { PkiError } from "./pki_error.ts";
import { needsRenewal, type RenewalPolicy } from "./renewal.ts";
import {
  issueServerCertificate,
  serverSubjectAltNames,
  subjectAltNamesOf,
} from "./server_certificate.ts";
import type { x509 } from "./x509_provider.ts";

/** File names inside a PKI directory. */
export const PKI_FILES = {
  caCert: "ca.crt",
  caKey: "ca.key",
  serverCert: "server.crt",
  serverKey: "server.key",
} as const;

/** Options of {@link loadOrCreateNodePki}. */
export interface NodePkiOptions {
  /** The node's DNS names (hostname first). */
  hostnames: readonly string[];
  /** The node's IPv4/IPv6 addresses. */
  addresses: readonly string[];
  /**
   * The CA from the machine config, when it carries one. It is the source of
   * truth: written to the directory when absent, and replacing a different CA
   * there (an explicit change by the operator, not a silent re-key).
   */
  ca?: { certPem: string; keyPem: string };
  /** Current time. @default new Date() */
  now?: Date;
  /** When the server certificate is due for renewal. */
  renewal?: RenewalPolicy;
}

/** What {@link loadOrCreateNodePki} found or made. */
export interface NodePki {
  /** The PKI directory. */
  readonly dir: string;
  /** The node CA (from disk, the machine config, or new). */
  readonly ca: CertificateAuthority;
  /** The API server's certificate and key, valid for the node's current names. */
  readonly server: KeyedCertificate;
  /** Files (re)written by this call, by name; empty when everything was loaded. */
  readonly written: readonly string[];
}

/**
 * Load the PKI in `dir`, creating what is missing:
 * - no files (or no directory): create a CA (or use `options.ca`) and a server certificate;
 * - CA present, server pair absent: issue a server certificate;
 * - all present: load them; re-issue the server certificate when it is not
 *   signed by the CA, misses one of the node's names, or is due for renewal.
 * @throws {PkiError} `partial` when a certificate is present without its key
 *   (or the reverse), or server files exist without a CA; `invalid` or
 *   `key_mismatch` when a file is corrupt or a key does not fit its certificate
 */
export async function loadOrCreateNodePki(dir: string, options: NodePkiOptions): Promise<NodePki> {
  const now = options.now ?? new Date();
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const present = await presentFiles(dir);
  checkComplete(dir, present);
  const written: string[] = [];

  let ca: CertificateAuthority;
  const given = options.ca
    ? await loadCertificateAuthority(options.ca.certPem, options.ca.keyPem, "machine config")
    : undefined;
  const onDisk = present.has(PKI_FILES.caCert)
    ? await loadCertificateAuthority(
      await Deno.readTextFile(join(dir, PKI_FILES.caCert)),
      await Deno.readTextFile(join(dir, PKI_FILES.caKey)),
      dir,
    )
    : undefined;
  if (given && (!onDisk || onDisk.certPem.trim() !== given.certPem.trim())) {
    ca = given;
  } else {
    ca = onDisk ?? given ?? await createCertificateAuthority({ now });
  }
  if (ca !== onDisk) {
    await writeFileAtomic(join(dir, PKI_FILES.caKey), ca.keyPem, { mode: 0o600 });
    await writeFileAtomic(join(dir, PKI_FILES.caCert), ca.certPem, { mode: 0o644 });
    written.push(PKI_FILES.caKey, PKI_FILES.caCert);
  }

  let server = present.has(PKI_FILES.serverCert) ? await loadServerPair(dir) : undefined;
  if (
    !server || !(await serverCertificateFits(server.cert, ca, options, now))
  ) {
    server = await issueServerCertificate({
      ca,
      hostnames: options.hostnames,
      addresses: options.addresses,
      now,
    });
    await writeServerCertificate(dir, server);
    written.push(PKI_FILES.serverKey, PKI_FILES.serverCert);
  }
  return { dir, ca, server, written };
}

/**
 * Persist a server certificate and key into a PKI directory (key first, so a
 * crash between the two leaves a key that does not match, which the next
 * {@link loadOrCreateNodePki} detects as `key_mismatch` rather than using).
 */
export async function writeServerCertificate(dir: string, server: KeyedCertificate): Promise<void> {
  await writeFileAtomic(join(dir, PKI_FILES.serverKey), server.keyPem, { mode: 0o600 });
  await writeFileAtomic(join(dir, PKI_FILES.serverCert), server.certPem, { mode: 0o644 });
}

/**
 * True when `cert` is signed by `ca`, is not due for renewal at `now`, and its
 * SANs include every name the node currently has.
 */
export async function serverCertificateFits(
  cert: x509.X509Certificate,
  ca: CertificateAuthority,
  names: { hostnames: readonly string[]; addresses: readonly string[]; renewal?: RenewalPolicy },
  now: Date,
): Promise<boolean> {
  if (cert.issuer !== ca.cert.subject) return false;
  if (!(await cert.verify({ publicKey: ca.cert.publicKey, signatureOnly: true }))) return false;
  if (needsRenewal(cert, now, names.renewal)) return false;
  const have = subjectAltNamesOf(cert);
  const haveSet = new Set([...have.dns, ...have.ip.map((ip) => ip.toLowerCase())]);
  return serverSubjectAltNames(names.hostnames, names.addresses).every((n) => haveSet.has(n.value));
}

async function loadServerPair(dir: string): Promise<KeyedCertificate> {
  const certPath = join(dir, PKI_FILES.serverCert);
  const keyPath = join(dir, PKI_FILES.serverKey);
  const certPem = await Deno.readTextFile(certPath);
  const keyPem = await Deno.readTextFile(keyPath);
  const cert = certificateFromPem(certPem, certPath);
  const key = await privateKeyFromPem(keyPem, keyPath);
  if (!(await keyMatchesCertificate(key, cert))) {
    throw new PkiError(
      "key_mismatch",
      `Key "${keyPath}" does not match certificate "${certPath}"`,
      {
        path: dir,
      },
    );
  }
  return { cert, certPem, key, keyPem };
}

async function presentFiles(dir: string): Promise<Set<string>> {
  const present = new Set<string>();
  for (const name of Object.values(PKI_FILES)) {
    if (await pathExists(join(dir, name))) present.add(name);
  }
  return present;
}

/** Throws `partial` unless each cert/key pair is all-or-nothing and server files have a CA. */
function checkComplete(dir: string, present: Set<string>): void {
  const missing: string[] = [];
  const pairs = [[PKI_FILES.caCert, PKI_FILES.caKey], [PKI_FILES.serverCert, PKI_FILES.serverKey]];
  for (const pair of pairs) {
    const have = pair.filter((f) => present.has(f));
    if (have.length === 1) missing.push(...pair.filter((f) => !present.has(f)));
  }
  const hasServer = present.has(PKI_FILES.serverCert) || present.has(PKI_FILES.serverKey);
  const hasCa = present.has(PKI_FILES.caCert) || present.has(PKI_FILES.caKey);
  if (hasServer && !hasCa) missing.push(PKI_FILES.caCert, PKI_FILES.caKey);
  if (missing.length === 0) return;
  throw new PkiError(
    "partial",
    `PKI directory "${dir}" is incomplete: missing ${missing.map((m) => `"${m}"`).join(", ")}; ` +
      `refusing to create new keys next to existing ones`,
    { path: dir, missing, present: [...present] },
  );
}
