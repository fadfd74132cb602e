/**
 * Who is on the other end of a TLS connection. The TLS layer already refused
 * clients without a certificate, with one from another CA, expired, or
 * without the clientAuth usage; pki's verifyClientCertificate closes what
 * rustls lets through (a certificate with no EKU at all, such as a CA's) and
 * reads the role; apid then requires a KeyUsage extension, when present, to
 * allow digitalSignature (a TLS 1.3 client signs the handshake with its key,
 * and rustls does not check KeyUsage). The result is cached per HTTP/2
 * session, so a keep-alive client pays for one verification.
 */
import type { Http2Session } from "node:http2";
import type { TLSSocket } from "node:tls";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type CertificateAuthority,
  ClientCertificateError,
  verifyClientCertificate,
  x509,
} from "../../pki/mod.ts";
import type { CallerIdentity } from "../auth/identity.ts";

/** Resolves the caller of a request, once per session. */
export interface PeerVerifier {
  /**
   * The verified identity of the session's peer.
   * @throws ConnectError Unauthenticated naming the certificate problem.
   */
  identify(
    session: Http2Session | undefined,
    socket: TLSSocket | undefined,
  ): Promise<CallerIdentity>;
}

/** A verifier against the node CA (read at each new session, so a CA swap applies). */
export function createPeerVerifier(ca: () => Pick<CertificateAuthority, "cert">): PeerVerifier {
  const cache = new WeakMap<Http2Session, Promise<CallerIdentity>>();
  const verify = async (socket: TLSSocket | undefined): Promise<CallerIdentity> => {
    try {
      const peer = socket?.getPeerCertificate?.();
      const identity = await verifyClientCertificate(peer, ca());
      requireDigitalSignature(peer as { raw?: Uint8Array } | undefined);
      return { name: identity.name, role: identity.role, serialNumber: identity.serialNumber };
    } catch (e) {
      if (e instanceof ClientCertificateError) {
        throw new ConnectError(e.message, Code.Unauthenticated, undefined, undefined, e);
      }
      throw e;
    }
  };
  return {
    identify(session, socket) {
      if (!session) return verify(socket);
      let found = cache.get(session);
      if (!found) {
        found = verify(socket ?? (session.socket as TLSSocket));
        cache.set(session, found);
      }
      return found;
    },
  };
}

/**
 * A present KeyUsage must allow digitalSignature.
 * @throws ConnectError Unauthenticated naming the certificate and its usages.
 */
export function requireDigitalSignature(peer: { raw?: Uint8Array } | undefined): void {
  if (!peer?.raw) return;
  const cert = new x509.X509Certificate(new Uint8Array(peer.raw));
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  if (!ku || (ku.usages & x509.KeyUsageFlags.digitalSignature)) return;
  throw new ConnectError(
    `Client certificate "${cert.subject}" has a key usage without digitalSignature`,
    Code.Unauthenticated,
  );
}
