/**
 * apid reads the PKI machined prepared: the CA certificate (to verify clients)
 * and the server pair. It never sees the CA key: a network-facing process that
 * is compromised must not be able to mint client certificates. machined renews
 * the server certificate and restarts apid with the new pair.
 */
import { join } from "node:path";
import {
  type CertificateAuthority,
  certificateFromPem,
  type KeyedCertificate,
  keyMatchesCertificate,
  PKI_FILES,
  PkiError,
  privateKeyFromPem,
} from "../../pki/mod.ts";

/** The CA certificate and the current server pair; no CA in maintenance mode. */
export interface ApidPki {
  readonly ca?: Pick<CertificateAuthority, "cert" | "certPem">;
  readonly server: KeyedCertificate;
  /** machined left {@link MAINTENANCE_MARKER} and no ca.crt: serve without client certificates. */
  readonly maintenance: boolean;
}

/**
 * The file machined writes into apid's directory, instead of ca.crt, while the
 * node has no CA. Its presence, not a missing ca.crt, is what puts apid in
 * maintenance mode: a lost ca.crt alone is an error, never an open API.
 */
export const MAINTENANCE_MARKER = "maintenance";

/**
 * Read ca.crt, server.crt and server.key from `dir`.
 * @throws PkiError `invalid` or `key_mismatch`; Deno.errors.NotFound when a file is missing.
 */
export async function loadApidPki(dir: string): Promise<ApidPki> {
  const read = (name: string) => Deno.readTextFile(join(dir, name));
  let ca: ApidPki["ca"];
  let maintenance = false;
  try {
    const caCertPem = await read(PKI_FILES.caCert);
    ca = { cert: certificateFromPem(caCertPem, join(dir, PKI_FILES.caCert)), certPem: caCertPem };
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    const marker = await read(MAINTENANCE_MARKER).catch(() => undefined);
    if (marker === undefined) throw e;
    maintenance = true;
  }
  const certPath = join(dir, PKI_FILES.serverCert);
  const certPem = await read(PKI_FILES.serverCert);
  const keyPem = await read(PKI_FILES.serverKey);
  const cert = certificateFromPem(certPem, certPath);
  const key = await privateKeyFromPem(keyPem, join(dir, PKI_FILES.serverKey));
  if (!(await keyMatchesCertificate(key, cert))) {
    throw new PkiError("key_mismatch", `Server key in "${dir}" does not match its certificate`, {
      path: dir,
    });
  }
  return { ca, server: { cert, certPem, key, keyPem }, maintenance };
}
