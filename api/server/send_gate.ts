/**
 * Back-pressure for HTTP/2 responses, which Deno 2.9.3's node:http2 does not
 * give: a response stream's write() drains at once whatever the peer's
 * flow-control window, and the bytes queue in the native session without
 * bound (measured; docs/decisions.md). The gate counts the bytes written to
 * each session's responses against what its socket has actually sent, and
 * while more than `maxUnsentBytes` wait it makes write() return false and
 * holds back `drain`, so connect-node stops pulling the handler (it awaits
 * drain). Per-stream windows are not visible from JavaScript, so the bound is
 * per connection.
 */
import http2 from "node:http2";
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from "node:http2";

/** Options of {@link createSendGate}. */
export interface SendGateOptions {
  /** Unsent bytes per connection before writers wait. @default 1 MiB */
  readonly maxUnsentBytes?: number;
  /** How often a held connection is re-checked. @default 25 */
  readonly pollMs?: number;
  /** How long an overflowed stream may take to end before it is reset. @default 5000 */
  readonly resetAfterMs?: number;
}

/** What a handler may do to its own response. */
export interface ResponseControl {
  /** Lets the response write past the gate (to send an overflow marker and trailers), and resets the stream if it has not ended within `resetAfterMs`. */
  overflow(): void;
}

/** Applies the gate to HTTP/2 responses. */
export interface SendGate {
  /** Gates `res` (HTTP/2 only; HTTP/1.1 has real socket back-pressure). */
  track(req: unknown, res: unknown): ResponseControl;
  /** Unsent bytes on `session`, as the gate estimates them. */
  unsent(session: Http2Session): number;
}

interface Account {
  readonly session: Http2Session;
  app: number;
  appBase: number;
  sentBase: number;
  readonly held: Set<() => void>;
  timer?: ReturnType<typeof setInterval>;
}

/** Default unsent bytes per connection. */
export const DEFAULT_MAX_UNSENT_BYTES = 1024 * 1024;

const NONE: ResponseControl = { overflow() {} };

/** A gate; see the module doc. */
export function createSendGate(o: SendGateOptions = {}): SendGate {
  const max = o.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES;
  const pollMs = o.pollMs ?? 25;
  const resetAfterMs = o.resetAfterMs ?? 5000;
  const accounts = new WeakMap<Http2Session, Account>();
  const sent = (a: Account) => (a.session.socket as { bytesWritten?: number })?.bytesWritten ?? 0;
  const unsent = (a: Account) => {
    const u = a.app - a.appBase - (sent(a) - a.sentBase);
    if (u > 0) return u;
    // Caught up: re-base, so framing and TLS overhead never accumulate into slack.
    a.appBase = a.app;
    a.sentBase = sent(a);
    return 0;
  };
  const account = (session: Http2Session) => {
    let a = accounts.get(session);
    if (!a) {
      a = { session, app: 0, appBase: 0, sentBase: 0, held: new Set() };
      a.sentBase = sent(a);
      accounts.set(session, a);
      session.once("close", () => release(a!, true));
    }
    return a;
  };
  const release = (a: Account, all = false) => {
    if (!all && unsent(a) > max / 2) return;
    clearInterval(a.timer);
    a.timer = undefined;
    const held = [...a.held];
    a.held.clear();
    for (const resume of held) resume();
  };
  return {
    unsent: (session) => {
      const a = accounts.get(session);
      return a ? unsent(a) : 0;
    },
    track(req, res) {
      const request = req as Http2ServerRequest;
      const response = res as Http2ServerResponse;
      const session = request.stream?.session;
      if (request.httpVersionMajor !== 2 || !session) return NONE;
      const a = account(session);
      let bypass = false;
      let drainHeld = false;
      const resume = () => {
        if (!drainHeld) return;
        drainHeld = false;
        emit("drain");
      };
      const write = response.write.bind(response) as (...args: unknown[]) => boolean;
      const emit = response.emit.bind(response) as (event: string, ...args: unknown[]) => boolean;
      response.write = ((chunk: unknown, ...rest: unknown[]) => {
        a.app += byteLength(chunk);
        const ok = write(chunk, ...rest);
        if (bypass || unsent(a) <= max) return ok;
        drainHeld = true;
        a.held.add(resume);
        a.timer ??= setInterval(() => release(a), pollMs);
        return false;
      }) as typeof response.write;
      response.emit = ((event: string, ...args: unknown[]) => {
        if (event === "drain" && drainHeld) return true; // released by the gate instead
        return emit(event, ...args);
      }) as typeof response.emit;
      response.once("close", () => a.held.delete(resume));
      return {
        overflow() {
          bypass = true;
          a.held.delete(resume);
          resume();
          const stream = request.stream;
          const timer = setTimeout(() => {
            if (!stream.closed) stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
          }, resetAfterMs);
          stream.once("close", () => clearTimeout(timer));
        },
      };
    },
  };
}

function byteLength(chunk: unknown): number {
  if (typeof chunk === "string") return new TextEncoder().encode(chunk).byteLength;
  if (ArrayBuffer.isView(chunk)) return chunk.byteLength;
  return 0;
}
