/**
 * Turns any failure into one clear line for the operator: TLS refusals (the
 * reason machinectl found in its own certificate, and the TLS alert the node
 * sent, e.g. `certificate_expired`), permission
 * denials (role and method), unreachable endpoints, and API codes.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { CliError } from "./io.ts";
import { CONNECT_TIMEOUT_MS } from "../api/client/mod.ts";

/**
 * One line describing `e`, given the endpoint that was being called and, for
 * a refused handshake, what is wrong with this client's certificate (see
 * diagnoseClientCertificate).
 */
export function describeError(e: unknown, endpoint?: string, refusal?: string): string {
  if (e instanceof CliError) return e.message;
  const where = endpoint ? ` at ${endpoint}` : "";
  const alert = tlsAlert(`${e instanceof Error ? e.message : ""} ${causeText(e)}`);
  const refused = refusal
    ? `the node${where} refused this client certificate: ${refusal}${
      alert ? ` (TLS alert ${alert})` : ""
    }`
    : alert
    ? `the node${where} refused this client certificate (TLS alert ${alert})`
    : "";
  if (e instanceof ConnectError) {
    const cause = causeText(e);
    if (refused && isRefusedHandshake(e, cause)) return refused;
    if (e.code === Code.PermissionDenied) return `permission denied: ${e.rawMessage}`;
    if (e.code === Code.ResourceExhausted) {
      return `the node${where} refused this call to stay within its budget ` +
        `(ResourceExhausted: ${e.rawMessage}); what it already serves goes on: try again later`;
    }
    if (/connection establishment timed out/i.test(cause)) {
      return `the node${where} did not complete the connection (TCP connect and TLS handshake) ` +
        `within ${CONNECT_TIMEOUT_MS / 1000} s (the node may be slow or overloaded)`;
    }
    if (e.code === Code.Unauthenticated) {
      return `the node${where} did not accept this client: ${e.rawMessage}`;
    }
    // With TLS 1.3 the client finishes its handshake before the server checks the
    // client certificate; a refusal then arrives as a reset or cancelled stream.
    if (
      isTlsRejection(cause) ||
      (e.code === Code.Canceled || e.code === Code.Unavailable) &&
        /error code CANCEL|ECONNRESET|connection reset|socket hang up/i.test(cause)
    ) {
      return `the node${where} rejected this client certificate (${cause.trim()})`;
    }
    if (isHandshakeCut(cause)) {
      return `the node${where} closed the connection during the TLS handshake (its API may be ` +
        `restarting, as after a server certificate re-issue; try again): ${cause.trim()}`;
    }
    if (isNameMismatch(cause)) {
      return `the node${where} presented a certificate that does not name the address dialled ` +
        `(${cause.trim()}); the node adds its addresses and machine.api.cert_sans to it`;
    }
    if (isTlsServerUntrusted(cause)) {
      return `the node${where} presented a certificate this context's CA does not trust (${cause.trim()})`;
    }
    if (
      isUnreachable(cause) || e.code === Code.Unavailable && /connect|refused|unreach/i.test(cause)
    ) {
      return `cannot reach the node${where}: ${cause || e.rawMessage}`;
    }
    // The client's own timeout says "timed out"; a node's deadline refusal carries its reason.
    if (e.code === Code.DeadlineExceeded && (!e.rawMessage || /timed out/i.test(e.rawMessage))) {
      return `the node${where} did not answer in time`;
    }
    return `${Code[e.code] ?? e.code}: ${e.rawMessage}${
      cause && !e.rawMessage.includes(cause) ? ` (${cause})` : ""
    }`;
  }
  if (e instanceof Error) {
    const text = `${e.message} ${causeText(e)}`;
    if (refused && (isTlsRejection(text) || isPeerClosed(text))) return refused;
    if (isTlsRejection(text)) return `the node${where} rejected this client certificate`;
    if (isUnreachable(text)) return `cannot reach the node${where}: ${e.message}`;
    return e.message;
  }
  return String(e);
}

/** What a handshake the server refused without an alert looks like to connect-node. */
export function isRefusedHandshake(e: ConnectError, cause = causeText(e)): boolean {
  return isTlsRejection(cause) || isPeerClosed(cause) ||
    (e.code === Code.Canceled || e.code === Code.Unavailable) &&
      /error code CANCEL|ECONNRESET|connection reset|socket hang up/i.test(cause);
}

/**
 * The TLS alert a refused handshake carried, in RFC 8446's spelling
 * (`unknown_ca`), from rustls's ("received fatal alert: UnknownCA") or
 * OpenSSL's ("tlsv1 alert unknown ca") wording; undefined without one.
 */
export function tlsAlert(text: string): string | undefined {
  const rustls = /received fatal alert: ([A-Za-z]+)/.exec(text);
  if (rustls) {
    return rustls[1].replace(/CA$/, "Ca").replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  }
  const openssl = /(?:sslv3|tlsv1[0-9]?) alert ([a-z ]+?)(?:[:)]|$)/i.exec(text);
  return openssl ? openssl[1].trim().replace(/ /g, "_").toLowerCase() : undefined;
}

function isPeerClosed(text: string): boolean {
  return /socket has been ended by the other party|unexpected eof|ECONNRESET|socket hang up/i
    .test(text);
}

function causeText(e: unknown): string {
  const parts: string[] = [];
  let c: unknown = (e as { cause?: unknown })?.cause;
  for (let depth = 0; c && depth < 5; depth++) {
    parts.push(c instanceof Error ? c.message : String(c));
    c = (c as { cause?: unknown }).cause;
  }
  if (e instanceof ConnectError) parts.unshift(e.rawMessage);
  return parts.join(" ");
}

function isTlsRejection(text: string): boolean {
  return /certificate required|bad certificate|unknown ca|certificate unknown|certificate expired|unsupported certificate|alert.*(certificate|handshake)|peer.*certificate|CertificateRequired|BadCertificate|UnknownCA|access denied|decrypt error|received fatal alert/i
    .test(text);
}

function isNameMismatch(text: string): boolean {
  return /does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID|NotValidForName/i
    .test(text);
}

function isTlsServerUntrusted(text: string): boolean {
  return /self[- ]signed|unable to verify|UNABLE_TO_VERIFY|invalid peer certificate|UnknownIssuer|certificate not trusted|ERR_TLS_CERT_ALTNAME_INVALID|NotValidForName/i
    .test(text);
}

/** The server went away before the handshake finished (not a refusal: that comes after it). */
function isHandshakeCut(text: string): boolean {
  return /disconnected before secure TLS connection was established/i.test(text);
}

function isUnreachable(text: string): boolean {
  return /ECONNREFUSED|Connection refused|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND|No route to host|Name or service not known|os error 111/i
    .test(text);
}
