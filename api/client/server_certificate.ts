/**
 * The certificate a node's API serves, read from a verified mutual-TLS
 * handshake like the one the API client makes (same CA, same client
 * certificate, same name check), so `machinectl health` can warn before the
 * node's own certificate expires, not only the client's.
 *
 * @module
 */
import tls from "node:tls";
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
  const timeoutMs = o.timeoutMs ?? 10_000;
  const socket = tls.connect({
    host: o.host,
    port: o.port,
    ca: o.caPem,
    ...(o.certPem ? { cert: o.certPem, key: o.keyPem } : {}),
    ALPNProtocols: ["h2"],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`TLS to ${o.host}:${o.port} timed out after ${timeoutMs} ms`)),
        timeoutMs,
      );
      socket.once("secureConnect", () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const raw = socket.getPeerCertificate(true)?.raw;
    if (!raw) throw new Error(`the node at ${o.host}:${o.port} presented no certificate`);
    return new x509.X509Certificate(new Uint8Array(raw));
  } finally {
    socket.destroy();
  }
}
