/**
 * apid runs as the unprivileged machined-api user, so it gets its own copy of
 * the PKI material it needs, owned by that user, in a directory nobody else can
 * read: the CA certificate (to verify clients) and its server pair. Never the
 * CA key: that stays in machined's own PKI directory (0700 root), so a
 * compromised apid cannot mint client certificates. The copy is rewritten
 * whenever machined re-issues the server certificate.
 */
import { join } from "node:path";
import { APID_GID, APID_UID } from "../edge/mod.ts";
import { type KeyedCertificate, PKI_FILES, writeFileAtomic } from "../../pki/mod.ts";

/** What apid may hold: the CA certificate and its own server pair. */
export interface ApidPkiMaterial {
  readonly ca: { readonly certPem: string };
  readonly server: KeyedCertificate;
}

/** The only files {@link prepareApidPki} leaves in apid's directory. */
export const APID_PKI_FILES: readonly string[] = [
  PKI_FILES.caCert,
  PKI_FILES.serverCert,
  PKI_FILES.serverKey,
];

/**
 * Writes ca.crt, server.crt and server.key into `dir` (0700), each 0600, owned
 * by apid's user when running as root, and removes anything else there (a
 * `ca.key` left by an older machined included).
 */
export async function prepareApidPki(pki: ApidPkiMaterial, dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await Deno.chmod(dir, 0o700);
  const files: Array<[string, string]> = [
    [PKI_FILES.caCert, pki.ca.certPem],
    [PKI_FILES.serverCert, pki.server.certPem],
    [PKI_FILES.serverKey, pki.server.keyPem],
  ];
  for (const [name, text] of files) {
    await writeFileAtomic(join(dir, name), text, { mode: 0o600 });
  }
  for await (const entry of Deno.readDir(dir)) {
    if (!APID_PKI_FILES.includes(entry.name)) {
      await Deno.remove(join(dir, entry.name), { recursive: true });
    }
  }
  if (Deno.uid() === 0) {
    await Deno.chown(dir, APID_UID, APID_GID);
    for (const [name] of files) await Deno.chown(join(dir, name), APID_UID, APID_GID);
  }
}
