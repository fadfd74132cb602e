/**
 * Entering maintenance mode: the node has no CA (a generic image before its
 * config), so machined makes a self-signed server certificate for this boot,
 * writes it to apid's directory with the maintenance marker instead of a CA
 * certificate, starts the API (apid then asks for no client certificate and
 * answers only what api/auth/maintenance.ts allows), opens the gate and
 * prints the certificate's fingerprint, which the operator pins with
 * `machinectl apply-config --insecure --fingerprint`.
 *
 * @module
 */
import { join } from "node:path";
import { APID_GID, APID_UID, MAINTENANCE_MARKER } from "../edge/mod.ts";
import {
  type CertificateAuthority,
  certificateFingerprint,
  createSelfSignedServerCertificate,
  type KeyedCertificate,
  type NodePki,
  PKI_FILES,
  type ServerNames,
  writeFileAtomic,
} from "../../pki/mod.ts";
import type { ApiHandle, NodeApiPkiOptions } from "./api_pki.ts";
import { API_CONDITION } from "./api_condition.ts";

/** The API serving maintenance mode. */
export interface MaintenanceApi {
  readonly api: ApiHandle;
  readonly server: KeyedCertificate;
  /** `SHA256:<hex>` of the self-signed certificate. */
  readonly fingerprint: string;
}

/** Stands in for the CA while there is none: any use is a bug, and says so. */
const NO_CA: CertificateAuthority = new Proxy({} as CertificateAuthority, {
  get(_target, prop) {
    throw new Error(`the node has no CA in maintenance mode (read of ca.${String(prop)})`);
  },
});

/**
 * Writes server.crt, server.key and the marker into apid's directory (0700),
 * removing anything else there (a ca.crt first of all).
 */
export async function prepareMaintenanceApidPki(
  server: KeyedCertificate,
  dir: string,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await Deno.chmod(dir, 0o700);
  const files: Array<[string, string]> = [
    [PKI_FILES.serverCert, server.certPem],
    [PKI_FILES.serverKey, server.keyPem],
    [MAINTENANCE_MARKER, "no CA: serve maintenance mode\n"],
  ];
  for (const [name, text] of files) {
    await writeFileAtomic(join(dir, name), text, { mode: 0o600 });
  }
  for await (const entry of Deno.readDir(dir)) {
    if (!files.some(([name]) => name === entry.name)) {
      await Deno.remove(join(dir, entry.name), { recursive: true });
    }
  }
  if (Deno.uid() === 0) {
    await Deno.chown(dir, APID_UID, APID_GID);
    for (const [name] of files) await Deno.chown(join(dir, name), APID_UID, APID_GID);
  }
}

/** Starts the API in maintenance mode and opens `o.gate`. */
export async function enterMaintenance(
  o: NodeApiPkiOptions,
  names: ServerNames,
  startApi: (pki: NodePki) => Promise<ApiHandle>,
): Promise<MaintenanceApi> {
  const started = performance.now();
  const server = await createSelfSignedServerCertificate(names);
  const fingerprint = await certificateFingerprint(server.cert);
  await prepareMaintenanceApidPki(server, o.apidPkiDir);
  o.gate!.serving = true;
  const api = await startApi({ dir: o.pkiDir, ca: NO_CA, server, written: [] });
  o.machined.conditions.set(
    API_CONDITION,
    `maintenance mode: no CA yet; apply a config with machinectl apply-config --insecure ` +
      `--fingerprint ${fingerprint}`,
  );
  o.machined.logger.warn("pki", `maintenance mode: API certificate fingerprint ${fingerprint}`, {
    fingerprint,
    ms: Math.round(performance.now() - started),
  });
  o.machined.events.emit("api", "apid", "maintenance", `maintenance mode; ${fingerprint}`, {
    fingerprint,
  });
  o.announce?.(fingerprint);
  return { api, server, fingerprint };
}
