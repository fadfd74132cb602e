/**
 * The probe's real call (api/host/api_probe.ts): MachineService Version through
 * the edge over mutual TLS, as a short-lived `os:reader` identity machined
 * issues itself from the node CA it holds. The key lives in this process's
 * memory only, never on disk; the certificate expires minutes after the
 * probe's deadline. In maintenance mode (no CA) the call is a maintenance
 * caller's, without a client certificate, pinning the served certificate.
 *
 * @module
 */
import { createMachineClient } from "../client/mod.ts";
import {
  type CertificateAuthority,
  issueClientCertificate,
  type KeyedCertificate,
} from "../../pki/mod.ts";
import { API_PROBE_DEFAULTS, endpointOf, normalizeSerial } from "./api_probe.ts";

/** The probe identity's CN; its calls are not "a client served" (api_host.ts). */
export const PROBE_CLIENT_NAME = "machined-api-probe";

/** The probe's certificate outlives its deadline by this much, no more. */
const PROBE_LIFETIME_MS = API_PROBE_DEFAULTS.deadlineMs + 5 * 60_000;

/** How the probe proves itself and checks the server. */
export type ProbeCredentials =
  | { readonly kind: "ca"; readonly caPem: string; readonly client: KeyedCertificate }
  | { readonly kind: "maintenance"; readonly serverPem: string };

/** A probe identity: least privilege (os:reader), short-lived, in memory. */
export async function issueProbeCredentials(
  ca: CertificateAuthority,
): Promise<ProbeCredentials> {
  const client = await issueClientCertificate({
    ca,
    name: PROBE_CLIENT_NAME,
    role: "os:reader",
    now: new Date(Date.now() - 60_000), // a clock a little behind the edge's still accepts it
    lifetimeMs: PROBE_LIFETIME_MS,
  });
  return { kind: "ca", caPem: ca.certPem, client };
}

/** The serial the edge forwards for the probe's calls, normalized; undefined in maintenance. */
export function probeSerial(c: ProbeCredentials): string | undefined {
  return c.kind === "ca" ? normalizeSerial(c.client.cert.serialNumber) : undefined;
}

/**
 * One Version call to `address:port`, the server certificate verified for
 * `address` (against the CA, or pinned in maintenance mode). Resolves when
 * answered; rejects with the call's error.
 */
export async function callVersion(
  creds: ProbeCredentials,
  address: string,
  port: number,
  timeoutMs: number,
): Promise<void> {
  const client = createMachineClient({
    endpoint: endpointOf(address, port),
    connectTimeoutMs: timeoutMs,
    ...(creds.kind === "ca"
      ? { caPem: creds.caPem, certPem: creds.client.certPem, keyPem: creds.client.keyPem }
      : { caPem: creds.serverPem, insecure: "pinned" as const }),
  });
  try {
    await client.api.version({}, { timeoutMs });
  } finally {
    client.close();
  }
}
