/**
 * One line naming the real cause of a failed call, from its transport error
 * and what a step-by-step retry of the connection found
 * (connection_probe.ts): refused, unreachable, timed out (and in which step),
 * a server certificate this context does not trust, a TLS alert (the node
 * refused the client certificate), or the node closing an established
 * connection. Without a probe, or once the probe was served, the error alone
 * decides (errors.ts). Pure.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { CliError } from "./io.ts";
import { describeError, tlsAlert } from "./errors.ts";
import type { ProbeResult } from "./connection_probe.ts";

/** What is known about a failure. */
export interface FailureFacts {
  readonly error: unknown;
  /** `host:port` dialled, when the operator named it. */
  readonly endpoint?: string;
  /** What machinectl found wrong with its own certificate (certificate_diagnosis.ts). */
  readonly refusal?: string;
  /** The retry's outcome, when one was made. */
  readonly probe?: ProbeResult;
}

/** See the module doc. */
export function classifyFailure(f: FailureFacts): string {
  const where = f.endpoint ? ` at ${f.endpoint}` : "";
  const p = f.probe;
  if (!p || p.kind === "served" || !isTransportFailure(f.error)) {
    if (p?.kind === "served" && isTransportFailure(f.error)) {
      return `the node${where} closed the connection (${transportText(f.error)}); ` +
        `it accepts this client now: try again`;
    }
    return describeError(f.error, f.endpoint, f.refusal);
  }
  const s = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  switch (p.kind) {
    case "refused":
      return `cannot reach the node${where}: connection refused (nothing listens there: ` +
        `is the node up and its API started?)`;
    case "unreachable":
      return `cannot reach the node${where}: ${p.detail}`;
    case "connect_timeout":
      return `cannot reach the node${where}: the TCP connection timed out` +
        (p.ms > 0 ? ` after ${s(p.ms)}` : "");
    case "handshake_timeout":
      return `the node${where} timed out after ${s(p.ms)} during the TLS handshake ` +
        `(the node may be slow or overloaded)`;
    case "untrusted":
      return `the node${where} presented a certificate this context's CA does not trust ` +
        `(${p.detail})`;
    case "name_mismatch":
      return `the node${where} presented a certificate that does not name the address dialled ` +
        `(${p.detail}); the node adds its addresses and machine.api.cert_sans to it`;
    case "alert": {
      const alert = tlsAlert(p.detail) ?? p.detail;
      return f.refusal
        ? `the node${where} refused this client certificate: ${f.refusal} (TLS alert ${alert})`
        : `the node${where} refused this client certificate (TLS alert ${alert})`;
    }
    case "closed":
      return f.refusal
        ? `the node${where} refused this client certificate: ${f.refusal}`
        : `the node${where} closed the connection during the TLS handshake (${p.detail})`;
  }
}

/**
 * Whether `e` failed in the transport (connection, TLS, HTTP/2) rather than
 * being an answer of the node's API: worth a probe.
 */
export function isTransportFailure(e: unknown): boolean {
  if (e instanceof CliError) return false;
  if (e instanceof ConnectError) {
    const transportish = [
      Code.Unavailable,
      Code.Canceled,
      Code.Internal,
      Code.Aborted,
      Code.Unknown,
      Code.DeadlineExceeded,
    ];
    if (!transportish.includes(e.code)) return false;
  }
  return /CANCEL|ECONNRESET|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|socket|timed out|TLS|certificate|alert|handshake|connection refused|unreach|GOAWAY|session|closed|ended|hang up|connection establishment|os error|did not answer/i
    .test(transportText(e));
}

function transportText(e: unknown): string {
  const parts: string[] = [];
  let c: unknown = e;
  for (let depth = 0; c && depth < 5; depth++) {
    parts.push(
      c instanceof ConnectError ? c.rawMessage : c instanceof Error ? c.message : String(c),
    );
    c = (c as { cause?: unknown }).cause;
  }
  return parts.filter((t, i) => t && parts.indexOf(t) === i).join(": ");
}
