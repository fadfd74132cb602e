/**
 * What machinectl finds out about a connection that failed, by trying it
 * again step by step: the TCP connect, the TLS handshake (its server
 * certificate checked against the context's CA, its client certificate
 * offered), then the node's first HTTP/2 frame, which comes only once the node
 * has accepted the client certificate (with TLS 1.3 the refusal, a TLS alert,
 * follows the client's Finished). The transport error of a failed call alone
 * cannot tell a slow node from a refusal (both can end in a CANCEL or a closed
 * socket); {@link classifyFailure} (failure_classification.ts) reads the two.
 */

/** The furthest step reached, and what stopped there. */
export type ProbeResult =
  | { readonly kind: "served" }
  | { readonly kind: "refused"; readonly detail: string }
  | { readonly kind: "unreachable"; readonly detail: string }
  | { readonly kind: "connect_timeout"; readonly ms: number }
  | { readonly kind: "handshake_timeout"; readonly ms: number }
  | { readonly kind: "untrusted"; readonly detail: string }
  | { readonly kind: "name_mismatch"; readonly detail: string }
  | { readonly kind: "alert"; readonly detail: string }
  | { readonly kind: "closed"; readonly detail: string };

/** Where and as whom to probe. */
export interface ProbeTarget {
  readonly host: string;
  readonly port: number;
  readonly caPem: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  /** Each step's bound (connect, then handshake and first frame). */
  readonly timeoutMs: number;
}

import {
  type ClientCredentials,
  readClientConfig,
  resolveCredentials,
  withDefaultPort,
} from "../pki/mod.ts";
import { clientConfigPath, type ConnectionFlags } from "./connection.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const EMPTY_SETTINGS = new Uint8Array([0, 0, 0, 4, 0, 0, 0, 0, 0]);

/** Probes `t`; never throws (a failure is the result). Holds nothing open once settled. */
export async function probeConnection(t: ProbeTarget): Promise<ProbeResult> {
  const host = t.host.replace(/^\[|\]$/g, "");
  const tcp = await bounded(Deno.connect({ hostname: host, port: t.port }), t.timeoutMs);
  if (tcp === "timeout") return { kind: "connect_timeout", ms: t.timeoutMs };
  if (tcp instanceof Error) return connectFailure(tcp);
  tcp.close();
  let conn: Deno.TlsConn;
  try {
    conn = await Deno.connectTls({
      hostname: host,
      port: t.port,
      caCerts: [t.caPem],
      alpnProtocols: ["h2"],
      ...(t.certPem && t.keyPem ? { cert: t.certPem, key: t.keyPem } : {}),
    });
  } catch (e) {
    return connectFailure(e as Error);
  }
  try {
    const handshake = await bounded(conn.handshake(), t.timeoutMs);
    if (handshake === "timeout") return { kind: "handshake_timeout", ms: t.timeoutMs };
    if (handshake instanceof Error) return tlsFailure(handshake);
    const first = await bounded(firstFrame(conn), t.timeoutMs);
    if (first === "timeout") return { kind: "handshake_timeout", ms: t.timeoutMs };
    if (first instanceof Error) return tlsFailure(first);
    return first ? { kind: "served" } : { kind: "closed", detail: "end of stream" };
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/** Sends the HTTP/2 preface and reads once: true when the node sent anything. */
async function firstFrame(conn: Deno.TlsConn): Promise<boolean> {
  await conn.write(PREFACE);
  await conn.write(EMPTY_SETTINGS);
  const n = await conn.read(new Uint8Array(64));
  return n !== null && n > 0;
}

/** `p`, or "timeout" after `ms`, or the error it rejected with. */
async function bounded<T>(p: Promise<T>, ms: number): Promise<T | Error | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), ms);
  });
  // A promise left behind by the timeout still settles when its connection is closed.
  const settled = p.catch((e) => (e instanceof Error ? e : new Error(String(e))));
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

function connectFailure(e: Error): ProbeResult {
  if (e instanceof Deno.errors.ConnectionRefused) return { kind: "refused", detail: e.message };
  if (/timed out/i.test(e.message)) return { kind: "connect_timeout", ms: 0 };
  if (/certificate|alert|tls/i.test(e.message)) return tlsFailure(e);
  return { kind: "unreachable", detail: e.message };
}

function tlsFailure(e: Error): ProbeResult {
  const m = e.message;
  if (/received fatal alert|alert/i.test(m)) return { kind: "alert", detail: m };
  if (/NotValidForName|not valid for name|altnames/i.test(m)) {
    return { kind: "name_mismatch", detail: m };
  }
  if (
    /invalid peer certificate|UnknownIssuer|BadSignature|self[- ]signed|unable to verify/i.test(m)
  ) {
    return { kind: "untrusted", detail: m };
  }
  return { kind: "closed", detail: m };
}

/** How long each step of the CLI's probe may take. */
export const PROBE_TIMEOUT_MS = 5000;

/**
 * Probes the endpoint and credentials `flags` select (not for `--insecure`);
 * undefined when the client config cannot be read.
 */
export async function probeFromFlags(
  flags: ConnectionFlags,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ProbeResult | undefined> {
  if (flags.insecure) return undefined;
  let creds: ClientCredentials;
  try {
    creds = resolveCredentials(await readClientConfig(clientConfigPath(flags)), flags.context);
  } catch {
    return undefined;
  }
  const endpoint = flags.endpoints?.[0] ?? creds.endpoints[0];
  if (endpoint === undefined) return undefined;
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(withDefaultPort(endpoint));
  if (!m) return undefined;
  return await probeConnection({
    host: m[1],
    port: Number(m[2]),
    caPem: creds.caPem,
    certPem: creds.certPem,
    keyPem: creds.keyPem,
    timeoutMs,
  });
}
