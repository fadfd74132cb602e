/**
 * A lean gRPC client for machined's internal socket, for tests and the watch
 * bench: one node:http2 connection, calls as apid forwards them (identity in
 * headers), responses split into length-prefixed messages by hand. Unlike a
 * Connect client it costs little per message (so a bench measures machined),
 * and it can stop reading a stream (so a test can make a slow consumer).
 */
import http2 from "node:http2";
import { connectUnixStream } from "../../platform/unix_stream/mod.ts";
import { type CallerIdentity, identityToHeaders } from "../auth/mod.ts";

/** One call's response, as it arrives. */
export interface H2Call {
  /** Resolves with the trailers (or trailers-only headers) when the stream closes. */
  readonly done: Promise<Record<string, string | undefined>>;
  /** Stops reading (HTTP/2 flow control then holds the server back). */
  pause(): void;
  resume(): void;
  /** Cancels the call (RST_STREAM CANCEL). */
  cancel(): void;
}

/** A connection to the internal socket. */
export interface H2Client {
  /**
   * Calls `path` with one request message; `onMessage` gets each response
   * message's bytes (without the 5-byte prefix).
   */
  call(
    path: string,
    body: Uint8Array,
    onMessage: (bytes: Uint8Array) => void,
    headers?: Record<string, string>,
  ): H2Call;
  close(): void;
}

/** The identity apid would forward for an `os:reader` client. */
export const READER: CallerIdentity = { role: "os:reader", name: "test", serialNumber: "01" };

/** Connects to `socketPath` as `caller` (null: no identity headers). */
export function connectH2(
  socketPath: string,
  caller: CallerIdentity | null = READER,
): H2Client {
  const session = http2.connect("http://machined", {
    createConnection: () => connectUnixStream(socketPath),
  });
  const identity = new Headers();
  if (caller) identityToHeaders(caller, identity);
  return h2Client(session, Object.fromEntries(identity));
}

/**
 * The same lean client over any HTTP/2 session, e.g. one over mTLS to the
 * edge (bench/soak.ts), which sets the identity itself: `identity` (headers)
 * goes on every call.
 */
export function h2Client(
  session: http2.ClientHttp2Session,
  identity: Record<string, string> = {},
): H2Client {
  session.on("error", () => {});
  return {
    call(path, body, onMessage, headers = {}) {
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        ...identity,
        ...headers,
      });
      stream.end(frame(body));
      let buf: Uint8Array = new Uint8Array(0);
      stream.on("data", (chunk: Uint8Array) => {
        buf = buf.byteLength === 0 ? chunk : concat(buf, chunk);
        while (buf.byteLength >= 5) {
          const len = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
          if (buf.byteLength < 5 + len) break;
          onMessage(buf.subarray(5, 5 + len));
          buf = buf.subarray(5 + len);
        }
      });
      let trailers: Record<string, string | undefined> = {};
      const keep = (h: Record<string, unknown>) => {
        if (h["grpc-status"] !== undefined) trailers = h as Record<string, string>;
      };
      stream.on("response", keep);
      stream.on("trailers", keep);
      stream.on("error", () => {});
      return {
        done: new Promise((resolve) => stream.on("close", () => resolve(trailers))),
        pause: () => stream.pause(),
        resume: () => stream.resume(),
        cancel: () => stream.close(http2.constants.NGHTTP2_CANCEL),
      };
    },
    close: () => session.destroy(),
  };
}

/** `bytes` as one gRPC length-prefixed message. */
export function frame(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + bytes.byteLength);
  new DataView(out.buffer).setUint32(1, bytes.byteLength);
  out.set(bytes, 5);
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
