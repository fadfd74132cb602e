/**
 * The Watch flood's client (bench/attack_flood.ts): HTTP/2 by hand over mTLS,
 * as lean as a client can be, so that 15 000 streams cost this process little
 * and the figures are the node's. It opens gRPC calls and never reads them:
 * its SETTINGS give each stream a 1 KiB window and it never sends
 * WINDOW_UPDATE, so the server can send a connection 64 KiB at most, and the
 * rest waits in the edge and machined. It keeps no payload, only what each
 * stream's first answer was: response headers (accepted), a trailers-only
 * response (refused with a gRPC status, which the probe in attack_flood.ts
 * reads decoded), or RST_STREAM (refused by HTTP/2, e.g. REFUSED_STREAM past
 * the concurrent-stream limit). api/edge/testdata/raw_h2_client.ts is the
 * tests' fuller version of the same idea.
 */
import * as tls from "node:tls";
import type { Creds } from "./attack_node.ts";

const PREFACE = new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const DATA = 0x0, HEADERS = 0x1, RST_STREAM = 0x3, SETTINGS = 0x4, PING = 0x6, GOAWAY = 0x7;
const END_STREAM = 0x1, END_HEADERS = 0x4, ACK = 0x1;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;

/** What one connection's streams got, by first answer. */
export interface FloodCounts {
  opened: number;
  /** Response headers without END_STREAM: the call is being served. */
  accepted: number;
  /** A trailers-only response: refused (or failed) with a gRPC status. */
  trailersOnly: number;
  /** RST_STREAM codes, by code, for streams that had no headers yet. */
  resets: Record<number, number>;
  /** DATA bytes received (never acknowledged). */
  dataBytes: number;
  /** GOAWAY error code, when the server sent one. */
  goaway?: number;
}

/** One connection of the flood. */
export interface FloodConnection {
  readonly counts: FloodCounts;
  /** Opens `n` calls to `path` with `body` (a protobuf message, framed here). */
  open(path: string, body: Uint8Array, n: number): void;
  close(): void;
}

/** Connects as `creds` (TLS 1.3, ALPN h2); rejects when the handshake fails. */
export async function floodConnect(port: number, creds: Creds): Promise<FloodConnection> {
  const socket = tls.connect({
    host: "127.0.0.1",
    port,
    servername: "localhost",
    ALPNProtocols: ["h2"],
    ca: creds.caPem,
    cert: creds.certPem,
    key: creds.keyPem,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", () => resolve());
    socket.once("error", reject);
  });
  socket.on("error", () => {});
  const counts: FloodCounts = { opened: 0, accepted: 0, trailersOnly: 0, resets: {}, dataBytes: 0 };
  const answered = new Set<number>();
  const send = (type: number, flags: number, id: number, payload = new Uint8Array()) =>
    socket.write(frame(type, flags, id, payload));
  const settings = new Uint8Array(6);
  new DataView(settings.buffer).setUint16(0, SETTINGS_INITIAL_WINDOW_SIZE);
  new DataView(settings.buffer).setUint32(2, 1024);
  socket.write(PREFACE);
  send(SETTINGS, 0, 0, settings);
  let buf: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  socket.on("data", (chunk: Uint8Array) => {
    buf = buf.length === 0 ? chunk : concat([buf, chunk]);
    let at = 0;
    while (buf.length - at >= 9) {
      const len = (buf[at] << 16) | (buf[at + 1] << 8) | buf[at + 2];
      if (buf.length - at < 9 + len) break;
      const type = buf[at + 3], flags = buf[at + 4];
      const view = new DataView(buf.buffer, buf.byteOffset + at);
      const id = view.getUint32(5) & 0x7fffffff;
      const first = id !== 0 && !answered.has(id);
      if (type === SETTINGS && !(flags & ACK)) send(SETTINGS, ACK, 0);
      else if (type === PING && !(flags & ACK)) {
        send(PING, ACK, 0, buf.slice(at + 9, at + 9 + len));
      } else if (type === GOAWAY) counts.goaway = view.getUint32(13);
      else if (type === DATA) counts.dataBytes += len;
      else if (type === HEADERS && first) {
        answered.add(id);
        if (flags & END_STREAM) counts.trailersOnly++;
        else counts.accepted++;
      } else if (type === RST_STREAM && first) {
        answered.add(id);
        const code = view.getUint32(9);
        counts.resets[code] = (counts.resets[code] ?? 0) + 1;
      }
      at += 9 + len;
    }
    buf = buf.subarray(at);
  });
  let nextId = 1;
  return {
    counts,
    open(path, body, n) {
      const block = concat(
        [
          [":method", "POST"],
          [":scheme", "https"],
          [":path", path],
          [":authority", "localhost"],
          ["content-type", "application/grpc"],
          ["te", "trailers"],
        ].map(([k, v]) => literal(k, v)),
      );
      const msg = new Uint8Array(5 + body.length);
      new DataView(msg.buffer).setUint32(1, body.length);
      msg.set(body, 5);
      const frames: Uint8Array[] = [];
      for (let i = 0; i < n; i++, nextId += 2) {
        frames.push(
          frame(HEADERS, END_HEADERS, nextId, block),
          frame(DATA, END_STREAM, nextId, msg),
        );
        counts.opened++;
      }
      socket.write(concat(frames));
    },
    close: () => socket.destroy(),
  };
}

function frame(type: number, flags: number, id: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(9 + payload.length);
  out[0] = payload.length >> 16;
  out[1] = (payload.length >> 8) & 0xff;
  out[2] = payload.length & 0xff;
  out[3] = type;
  out[4] = flags;
  new DataView(out.buffer).setUint32(5, id);
  out.set(payload, 9);
  return out;
}

/** HPACK "literal header field without indexing, new name", no Huffman; short strings only. */
function literal(name: string, value: string): Uint8Array {
  const enc = new TextEncoder();
  const n = enc.encode(name), v = enc.encode(value);
  if (n.length > 126 || v.length > 126) throw new RangeError(`header too long for ${name}`);
  return concat([new Uint8Array([0, n.length]), n, new Uint8Array([v.length]), v]);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
