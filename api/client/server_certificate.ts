/**
 * The certificate a node's API serves, read from a verified mutual-TLS
 * handshake like the one the API client makes (same CA, same client
 * certificate, same name check), so `machinectl health` can warn before the
 * node's own certificate expires, not only the client's.
 *
 * @module
 */
import { peerCertificateDer } from "./peer_certificate.ts";
import { x509 } from "../../pki/mod.ts";

/** Where the API listens and the credentials a client presents to it. */
export interface ServerCertificateOptions {
  /** Host name or address (an IPv6 literal without brackets). */
  readonly host: string;
  readonly port: number;
  /** The CA the server certificate must chain to. */
  readonly caPem: string;
  /** The client certificate and key (the API asks for one). */
  readonly certPem?: string;
  readonly keyPem?: string;
  /** @default 10_000 */
  readonly timeoutMs?: number;
}

/**
 * The server certificate the API at `host:port` presents, once it verified.
 * @throws Error when the handshake fails, times out or the server presents none.
 */
export async function serverCertificate(
  o: ServerCertificateOptions,
): Promise<x509.X509Certificate> {
  const der = await peerCertificateDer({
    host: o.host,
    port: o.port,
    ca: o.caPem,
    ...(o.certPem ? { cert: o.certPem, key: o.keyPem } : {}),
    ALPNProtocols: ["h2"],
  }, o.timeoutMs ?? 10_000);
  return new x509.X509Certificate(der);
}
