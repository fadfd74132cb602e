/**
 * apid reads the PKI machined prepared (machined runs loadOrCreateNodePki at
 * boot, so apid never creates or writes keys).
 */
import { join } from "node:path";
import {
  type CertificateAuthority,
  certificateFromPem,
  type KeyedCertificate,
  keyMatchesCertificate,
  loadCertificateAuthority,
  PKI_FILES,
  PkiError,
  privateKeyFromPem,
} from "../../pki/mod.ts";

/** The CA (with key, for renewal) and the current server pair. */
export interface ApidPki {
  readonly ca: CertificateAuthority;
  readonly server: KeyedCertificate;
}

/**
 * Read ca.crt, ca.key, server.crt and server.key from `dir`.
 * @throws PkiError `invalid` or `key_mismatch`; Deno.errors.NotFound when a file is missing.
 */
export async function loadApidPki(dir: string): Promise<ApidPki> {
  const read = (name: string) => Deno.readTextFile(join(dir, name));
  const ca = await loadCertificateAuthority(
    await read(PKI_FILES.caCert),
    await read(PKI_FILES.caKey),
    dir,
  );
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
  return { ca, server: { cert, certPem, key, keyPem } };
}
