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
  const accounts = new SessionAccounts(
    o.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES,
    o.pollMs ?? 25,
  );
  const resetAfterMs = o.resetAfterMs ?? 5000;
  return {
    unsent: (session) => accounts.unsentOn(session),
    track(req, res) {
      const request = req as Http2ServerRequest;
      const session = request.stream?.session;
      if (request.httpVersionMajor !== 2 || !session) return NONE;
      return gateResponse(
        accounts,
        accounts.of(session),
        request,
        res as Http2ServerResponse,
        resetAfterMs,
      );
    },
  };
}

/** Each session's byte account: what its responses wrote against what its socket has sent. */
class SessionAccounts {
  readonly #accounts = new WeakMap<Http2Session, Account>();

  constructor(readonly max: number, readonly pollMs: number) {}

  /** The account of `session`, opened on first use and released when the session closes. */
  of(session: Http2Session): Account {
    let a = this.#accounts.get(session);
    if (!a) {
      a = { session, app: 0, appBase: 0, sentBase: 0, held: new Set() };
      a.sentBase = sent(a);
      this.#accounts.set(session, a);
      session.once("close", () => this.release(a!, true));
    }
    return a;
  }

  unsentOn(session: Http2Session): number {
    const a = this.#accounts.get(session);
    return a ? this.unsent(a) : 0;
  }

  unsent(a: Account): number {
    const u = a.app - a.appBase - (sent(a) - a.sentBase);
    if (u > 0) return u;
    // Caught up: re-base, so framing and TLS overhead never accumulate into slack.
    a.appBase = a.app;
    a.sentBase = sent(a);
    return 0;
  }

  /** Resumes the held writers once the backlog is under half the bound (or `all`: always). */
  release(a: Account, all = false): void {
    if (!all && this.unsent(a) > this.max / 2) return;
    clearInterval(a.timer);
    a.timer = undefined;
    const held = [...a.held];
    a.held.clear();
    for (const resume of held) resume();
  }

  /** Polls `a` until its held writers are released. */
  poll(a: Account): void {
    a.timer ??= setInterval(() => this.release(a), this.pollMs);
  }
}

function sent(a: Account): number {
  return (a.session.socket as { bytesWritten?: number })?.bytesWritten ?? 0;
}

/**
 * Wraps one response's write() and emit(): past the bound, write() returns false and the
 * response's `drain` waits for the account's release.
 */
function gateResponse(
  accounts: SessionAccounts,
  a: Account,
  request: Http2ServerRequest,
  response: Http2ServerResponse,
  resetAfterMs: number,
): ResponseControl {
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
    if (bypass || accounts.unsent(a) <= accounts.max) return ok;
    drainHeld = true;
    a.held.add(resume);
    accounts.poll(a);
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
}

function byteLength(chunk: unknown): number {
  if (typeof chunk === "string") return new TextEncoder().encode(chunk).byteLength;
  if (ArrayBuffer.isView(chunk)) return chunk.byteLength;
  return 0;
}
