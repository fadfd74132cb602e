/**
 * One TLS handshake to read the certificate a server presents: shared by the
 * maintenance-mode fingerprint check (insecure.ts, nothing trusted) and
 * `machinectl health`'s server-certificate check (server_certificate.ts,
 * verified against the CA), which differ only in the options they connect with.
 *
 * @module
 */
import tls from "node:tls";

/**
 * Connects with `options`, waits for the handshake (at most `timeoutMs`) and
 * returns the DER bytes of the certificate the server presented; the socket is
 * closed either way.
 * @throws Error when the handshake fails, times out or the server presents none.
 */
export async function peerCertificateDer(
  options: tls.ConnectionOptions & { host: string; port: number },
  timeoutMs: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const where = `${options.host}:${options.port}`;
  const socket = tls.connect(options);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`TLS to ${where} timed out after ${timeoutMs} ms`)),
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
    if (!raw) throw new Error(`the node at ${where} presented no certificate`);
    return new Uint8Array(raw);
  } finally {
    socket.destroy();
  }
}
