/**
 * A hand-rolled HTTP/2 client over mTLS for tests that need a peer which
 * opens gRPC streams and then never reads them: it acknowledges SETTINGS and
 * PINGs but sends no WINDOW_UPDATE until told to (`grant`), so the server can
 * send at most the initial 64 KiB connection window. Real clients (node:http2, connect) consume
 * and acknowledge on their own, which is exactly what such a test must avoid.
 */
import * as tls from "node:tls";

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA = 0x0, HEADERS = 0x1, RST_STREAM = 0x3, SETTINGS = 0x4, PING = 0x6, GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const END_STREAM = 0x1, END_HEADERS = 0x4, ACK = 0x1;

/** What the server did to one stream. */
export interface RawStreamState {
  /** DATA payload bytes received. */
  dataBytes: number;
  /** The DATA payloads, in order. */
  readonly data: Uint8Array[];
  /** HEADERS frames received (response headers, then trailers). */
  headerBlocks: number;
  /** The server ended the stream (trailers or DATA with END_STREAM). */
  ended: boolean;
  /** RST_STREAM error code, when the server reset it. */
  resetCode?: number;
}

/** Options of {@link openUnreadStreams}. */
export interface RawClientOptions {
  readonly host: string;
  readonly port: number;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** An open connection with `streams` streams whose responses are never read. */
export interface RawClient {
  readonly streams: ReadonlyMap<number, RawStreamState>;
  /** GOAWAY error code, when the server sent one. */
  readonly goaway: number | undefined;
  /**
   * Opens one gRPC call on `path` with `body` (a protobuf message, framed here).
   * With `endStream: false` only the HEADERS go out; {@link RawClient.finish} sends the body.
   */
  open(path: string, body: Uint8Array, options?: { endStream?: boolean }): number;
  /** Sends stream `id`'s body (framed here) with END_STREAM. */
  finish(id: number, body: Uint8Array): void;
  /** Resolves once the server has answered a PING: it has read everything sent before. */
  ping(): Promise<void>;
  /** Starts reading: grants `bytes` of flow-control window to the connection and every stream. */
  grant(bytes: number): void;
  close(): void;
}

/** Connects (TLS 1.3, ALPN h2) and sends the preface and an empty SETTINGS frame. */
export async function connectRawH2(o: RawClientOptions): Promise<RawClient> {
  const socket = tls.connect({
    host: o.host,
    port: o.port,
    servername: "localhost",
    ALPNProtocols: ["h2"],
    ca: o.ca,
    cert: o.cert,
    key: o.key,
  });
  socket.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", () => resolve());
    socket.once("error", reject);
  });
  const streams = new Map<number, RawStreamState>();
  let goaway: number | undefined;
  let nextId = 1;
  const pings: (() => void)[] = [];
  const finish = (id: number, body: Uint8Array) => {
    const msg = new Uint8Array(5 + body.length);
    new DataView(msg.buffer).setUint32(1, body.length);
    msg.set(body, 5);
    send(DATA, END_STREAM, id, msg);
  };
  const send = (type: number, flags: number, id: number, payload = new Uint8Array()) =>
    socket.write(frame(type, flags, id, payload));
  socket.write(PREFACE);
  send(SETTINGS, 0, 0);
  let buf = new Uint8Array(0);
  socket.on("data", (chunk: Uint8Array) => {
    buf = concat(buf, chunk);
    while (buf.length >= 9) {
      const len = (buf[0] << 16) | (buf[1] << 8) | buf[2];
      if (buf.length < 9 + len) break;
      const type = buf[3], flags = buf[4];
      const id = new DataView(buf.buffer, buf.byteOffset + 5, 4).getUint32(0) & 0x7fffffff;
      const payload = buf.slice(9, 9 + len);
      buf = buf.slice(9 + len);
      const s = streams.get(id);
      if (type === SETTINGS && !(flags & ACK)) send(SETTINGS, ACK, 0);
      else if (type === PING && !(flags & ACK)) send(PING, ACK, 0, payload);
      else if (type === PING) pings.shift()?.();
      else if (type === GOAWAY) goaway = new DataView(payload.buffer).getUint32(4);
      else if (s && type === DATA) {
        s.dataBytes += len;
        s.data.push(payload);
        if (flags & END_STREAM) s.ended = true;
      } else if (s && type === HEADERS) {
        s.headerBlocks++;
        if (flags & END_STREAM) s.ended = true;
      } else if (s && type === RST_STREAM) {
        s.resetCode = new DataView(payload.buffer).getUint32(0);
        s.ended = true;
      }
    }
  });
  return {
    streams,
    get goaway() {
      return goaway;
    },
    open(path, body, options) {
      const id = nextId;
      nextId += 2;
      streams.set(id, { dataBytes: 0, data: [], headerBlocks: 0, ended: false });
      const block = concat(
        ...[
          [":method", "POST"],
          [":scheme", "https"],
          [":path", path],
          [":authority", "localhost"],
          ["content-type", "application/grpc"],
          ["te", "trailers"],
        ].map(([k, v]) => literal(k, v)),
      );
      send(HEADERS, END_HEADERS, id, block);
      if (options?.endStream !== false) finish(id, body);
      return id;
    },
    finish,
    ping() {
      const answered = new Promise<void>((resolve) => pings.push(resolve));
      send(PING, 0, 0, new Uint8Array(8));
      return answered;
    },
    grant(bytes) {
      const update = new Uint8Array(4);
      new DataView(update.buffer).setUint32(0, bytes);
      for (const id of [0, ...streams.keys()]) send(WINDOW_UPDATE, 0, id, update);
    },
    close() {
      socket.destroy();
    },
  };
}

function frame(
  type: number,
  flags: number,
  id: number,
  payload: Uint8Array,
): Uint8Array<ArrayBuffer> {
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

/** HPACK "literal header field without indexing, new name", no Huffman. */
function literal(name: string, value: string): Uint8Array {
  const enc = new TextEncoder();
  return concat(new Uint8Array([0]), str(enc.encode(name)), str(enc.encode(value)));
}

function str(bytes: Uint8Array): Uint8Array {
  const len: number[] = [];
  if (bytes.length < 127) len.push(bytes.length);
  else {
    len.push(127);
    let n = bytes.length - 127;
    while (n >= 128) {
      len.push((n & 0x7f) | 0x80);
      n >>= 7;
    }
    len.push(n);
  }
  return concat(new Uint8Array(len), bytes);
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Splits gRPC-framed DATA bytes into messages. */
export function grpcMessages(data: readonly Uint8Array[]): Uint8Array[] {
  const all = concat(...data);
  const out: Uint8Array[] = [];
  for (let at = 0; at + 5 <= all.length;) {
    const len = new DataView(all.buffer, all.byteOffset + at + 1, 4).getUint32(0);
    out.push(all.slice(at + 5, at + 5 + len));
    at += 5 + len;
  }
  return out;
}
