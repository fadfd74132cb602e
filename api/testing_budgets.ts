/**
 * Test support for the edge's budget tests (budgets_edge_test.ts): a second
 * machined-edge with small budgets in front of an API fixture, TCP
 * connections from chosen loopback addresses that start a handshake and
 * stall, curl calls from a chosen address, the edge's refusal counters.
 * Not for production.
 */
import { equal, ok } from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import { createMachineClient, type MachineClient } from "./client/mod.ts";
import { type ApiFixture, startApiFixture, withTimeout } from "./testing.ts";
import type { EdgeOptions } from "./edge/mod.ts";
import { type EdgeServer, startEdgeServer } from "./edge/testing.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const VERSION = "/machined.v1.MachineService/Version";

/** A gRPC frame: flag byte, 4-byte big-endian length, payload. */
export function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** The fixture's internal server behind a second edge started with `limits`. */
export async function withEdge(
  limits: EdgeOptions,
  body: (f: ApiFixture, edge: EdgeServer) => Promise<void>,
): Promise<void> {
  const f = await startApiFixture();
  const edge = await startEdgeServer({
    ca: f.pki.ca,
    server: f.pki.server,
    socketPath: f.socketPath,
    pkiDir: join(f.pki.dir, "budget-pki"),
    limits,
  });
  try {
    await body(f, edge);
  } finally {
    await edge.close();
    await f.close();
  }
}

/** A TCP connection from `from` that sends the start of a ClientHello, then nothing. */
export interface Slow {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

export async function slowHandshake(port: number, from: string): Promise<Slow> {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress: from });
  socket.on("error", () => {});
  let done = false;
  const closed = new Promise<void>((r) => socket.once("close", () => (done = true, r())));
  await new Promise<void>((r, reject) => {
    socket.once("connect", () => r());
    socket.once("error", reject);
  });
  // A handshake record announcing 512 bytes, of which 6 follow.
  socket.write(new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
  return { socket, closed, isClosed: () => done };
}

/** One call with curl as `cert` (`os-admin`...), from `from`: status line, grpc-status/-message, body. */
export async function curl(
  f: ApiFixture,
  port: number,
  o: {
    path: string;
    cert?: string;
    from?: string;
    body?: Uint8Array;
    http1?: boolean;
    alpn?: boolean;
    headers?: Record<string, string>;
  },
): Promise<
  { httpStatus: number; status: string; message: string; body: string; code: number; head: string }
> {
  const dir = f.pki.dir;
  const cert = o.cert ?? "os-admin";
  const headers = o.headers ?? { "content-type": "application/grpc", te: "trailers" };
  const args = [
    "-sS",
    o.http1 ? "--http1.1" : "--http2",
    ...(o.alpn === false ? ["--no-alpn"] : []),
    "--max-time",
    "10",
    "--interface",
    o.from ?? "127.0.0.1",
    "--cacert",
    `${dir}/ca.crt`,
    "--cert",
    `${dir}/${cert}.crt`,
    "--key",
    `${dir}/${cert}.key`,
    ...Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    ...(o.body ? ["--data-binary", "@-"] : []),
    "-D",
    "/dev/stderr",
    `https://127.0.0.1:${port}${o.path}`,
  ];
  const child = new Deno.Command("curl", {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  if (o.body) await w.write(o.body);
  await w.close();
  const out = await withTimeout(child.output(), 15_000, `curl ${o.path}`);
  const head = new TextDecoder().decode(out.stderr);
  const field = (name: string) =>
    [...head.matchAll(new RegExp(`^${name}: (.*)$`, "gim"))].map((m) => m[1].trim()).at(-1) ?? "";
  return {
    httpStatus: Number(/^HTTP\/[\d.]+ (\d+)/m.exec(head)?.[1]),
    status: field("grpc-status"),
    message: decodeURIComponent(field("grpc-message")),
    body: new TextDecoder().decode(out.stdout),
    code: out.code,
    head,
  };
}

/** gRPC Version as `cert` from `from`. */
export const version = (f: ApiFixture, port: number, cert?: string, from?: string) =>
  curl(f, port, { path: VERSION, cert, from, body: frame(new Uint8Array()) });

/** The edge's counters (GET /metrics as the reader). */
export async function metrics(f: ApiFixture, port: number): Promise<string> {
  const r = await curl(f, port, { path: "/metrics", cert: "os-reader", headers: {} });
  equal(r.httpStatus, 200, r.body);
  return r.body;
}

export const counter = (text: string, reason: string) =>
  Number(
    new RegExp(`machined_edge_refused_total\\{reason="${reason}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
  );

export async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  await withTimeout(
    (async () => {
      while (!(await cond())) await sleep(50);
    })(),
    10_000,
    what,
  );
}

export function deepClosed(s: Slow[], expected: boolean[]): void {
  equal(JSON.stringify(s.map((x) => x.isClosed())), JSON.stringify(expected));
}

/** A Connect client with its own connection to the edge. */
export function client(f: ApiFixture, edge: EdgeServer): MachineClient {
  const c = f.pki.clients["os:admin"];
  return createMachineClient({
    endpoint: `127.0.0.1:${edge.port}`,
    caPem: f.pki.ca.certPem,
    certPem: c.certPem,
    keyPem: c.keyPem,
  });
}

export async function refusal(call: Promise<unknown>): Promise<ConnectError> {
  const e = await call.then(() => undefined, (e) => e);
  ok(e instanceof ConnectError, `expected a ConnectError, got ${e}`);
  return e;
}

/** What the edge sends, until it closes, after `request` on a TLS connection with `alpn`. */
export async function afterBytes(
  f: ApiFixture,
  port: number,
  alpn: string[],
  request: string,
): Promise<{ alpn: string | null; bytes: Uint8Array }> {
  const reader = f.pki.clients["os:reader"];
  const conn = await Deno.connectTls({
    hostname: "localhost",
    port,
    caCerts: [f.pki.ca.certPem],
    cert: reader.certPem,
    key: reader.keyPem,
    alpnProtocols: alpn,
  });
  try {
    const hs = await conn.handshake();
    await conn.write(new TextEncoder().encode(request));
    const got: number[] = [];
    const buf = new Uint8Array(4096);
    await withTimeout(
      (async () => {
        for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
          got.push(...buf.subarray(0, n));
        }
      })(),
      10_000,
      "the edge closes",
    );
    return { alpn: hs.alpnProtocol, bytes: new Uint8Array(got) };
  } finally {
    conn.close();
  }
}

/** The types of the HTTP/2 frames in `bytes`; throws when they are not whole frames. */
export function h2FrameTypes(bytes: Uint8Array): number[] {
  const types: number[] = [];
  for (let at = 0; at < bytes.length;) {
    ok(at + 9 <= bytes.length, "a whole frame header");
    const len = (bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2];
    types.push(bytes[at + 3]);
    at += 9 + len;
    ok(at <= bytes.length, "a whole frame");
  }
  return types;
}
