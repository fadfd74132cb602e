/**
 * apid runs as the unprivileged machined-api user, so it gets its own copy of
 * the PKI material it needs, owned by that user, in a directory nobody else can
 * read. The copy is rewritten whenever machined renews the server certificate.
 */
import { join } from "node:path";
import { APID_GID, APID_UID } from "../api/apid/apid_process_spec.ts";
import { type NodePki, PKI_FILES, writeFileAtomic } from "../pki/mod.ts";

/**
 * Writes ca.crt, ca.key, server.crt and server.key into `dir` (0700), each 0600,
 * owned by apid's user when running as root.
 */
export async function prepareApidPki(pki: NodePki, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const files: Array<[string, string]> = [
    [PKI_FILES.caCert, pki.ca.certPem],
    [PKI_FILES.caKey, pki.ca.keyPem],
    [PKI_FILES.serverCert, pki.server.certPem],
    [PKI_FILES.serverKey, pki.server.keyPem],
  ];
  for (const [name, text] of files) {
    await writeFileAtomic(join(dir, name), text, { mode: 0o600 });
  }
  if (Deno.uid() === 0) {
    await Deno.chown(dir, APID_UID, APID_GID);
    for (const [name] of files) await Deno.chown(join(dir, name), APID_UID, APID_GID);
  }
}
