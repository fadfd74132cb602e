/**
 * Reaching a node in maintenance mode, which has no CA yet and serves a
 * self-signed certificate: a first TLS connection reads that certificate and
 * checks its SHA-256 fingerprint against the one the operator read on the
 * node's console; the API connection then trusts exactly that certificate (as
 * its own CA), so a server that swaps certificates between the two
 * connections is refused by the TLS layer. Without a fingerprint, any server
 * is trusted (`--insecure` alone), as Talos's `--insecure` does.
 *
 * @module
 */
import { peerCertificateDer } from "./peer_certificate.ts";
import { certificateFingerprint, parseFingerprint, x509 } from "../../pki/mod.ts";
import { createMachineClient, type MachineClient } from "./create_machine_client.ts";

/** The pinned fingerprint did not match what the node presented. */
export class FingerprintMismatchError extends Error {
  override readonly name = "FingerprintMismatchError";
  constructor(
    readonly endpoint: string,
    readonly expected: string,
    readonly presented: string,
  ) {
    super(
      `the node at ${endpoint} presented a certificate with fingerprint ${presented}, ` +
        `not ${expected}: refusing to send it anything`,
    );
  }
}

/** Reads the certificate a TLS server presents at `host:port`, without trusting it. */
export async function presentedCertificate(
  host: string,
  port: number,
  timeoutMs = 10_000,
): Promise<{ pem: string; fingerprint: string }> {
  const bytes = await peerCertificateDer({
    host,
    port,
    rejectUnauthorized: false,
    ALPNProtocols: ["h2"],
    // A name of its own for this one look: a TLS session cached under the
    // host would be resumed, and a resumed session reports the certificate of
    // the server that first issued it, not of the one answering now.
    servername: `fingerprint-${crypto.randomUUID()}.invalid`,
  }, timeoutMs);
  return {
    pem: new x509.X509Certificate(bytes).toString("pem"),
    fingerprint: await certificateFingerprint(bytes),
  };
}

/**
 * A client for a node in maintenance mode at `host:port`, pinned to
 * `fingerprint` when given.
 * @throws FingerprintMismatchError when the node presents another certificate
 */
export async function createInsecureMachineClient(
  host: string,
  port: number,
  fingerprint?: string,
): Promise<MachineClient & { fingerprint?: string }> {
  const endpoint = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (fingerprint === undefined) {
    return createMachineClient({ endpoint, insecure: "unverified" });
  }
  const expected = parseFingerprint(fingerprint);
  const seen = await presentedCertificate(host, port);
  if (seen.fingerprint !== expected) {
    throw new FingerprintMismatchError(endpoint, expected, seen.fingerprint);
  }
  return {
    ...createMachineClient({ endpoint, insecure: "pinned", caPem: seen.pem }),
    fingerprint: seen.fingerprint,
  };
}
