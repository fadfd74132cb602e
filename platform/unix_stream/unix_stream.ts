/**
 * A node `Duplex` over a Deno Unix socket, so that node:http2 (the internal API
 * server, the CRI client) can speak over a Unix socket without node:net.
 *
 * Why not node:net: Deno 2.9.3's node:net pipe handle closes its file
 * descriptor twice. Every `close()` of a Unix-socket `net.Socket` or
 * `net.Server` is followed by a second `close(2)` of the same number a moment
 * later (strace shows it; unix_stream_root_test.ts pins it). If another thread
 * opened a file in between, that file is closed under it: in the test runner a
 * module load fails with "Bad file descriptor"; in PID 1 it could be the
 * watchdog, a netlink socket or the CRI connection. Deno's own `Deno.listen` /
 * `Deno.connect` with `transport: "unix"` close once, so this adapter carries
 * node's stream API over them. docs/decisions.md, "Unix sockets without
 * node:net".
 *
 * Back-pressure is the stream's own: the socket is read only while the
 * consumer wants more (`push` returning false stops the read loop), and a
 * write completes when Deno has written every byte. `bytesWritten` and
 * `bytesRead` count what crossed the socket, as net.Socket's do (the send gate
 * reads `bytesWritten`).
 */
import { Duplex } from "node:stream";

/** How much one read asks for. */
const READ_CHUNK = 64 * 1024;
/** Reads shorter than this are copied out, so a queued chunk does not pin a whole read buffer. */
const COPY_BELOW = 16 * 1024;
const EMPTY = new Uint8Array(0);

/** A connected (or connecting) Unix socket as a node Duplex. */
export class UnixStream extends Duplex {
  /** Bytes written to the socket (not merely queued), as `net.Socket#bytesWritten`. */
  bytesWritten = 0;
  /** Bytes read from the socket. */
  bytesRead = 0;
  /** True until the connection exists; node:http2 waits for `connect` while it is. */
  connecting: boolean;
  #conn: Deno.UnixConn | undefined;
  readonly #ready: Promise<Deno.UnixConn | undefined>;
  #reading = false;
  #closed = false;
  #buffer = new Uint8Array(READ_CHUNK);

  /** Wraps a connection, or one that is still being made. */
  constructor(conn: Deno.UnixConn | Promise<Deno.UnixConn>) {
    super({ allowHalfOpen: false });
    if (conn instanceof Promise) {
      this.connecting = true;
      this.#ready = conn.then((c) => this.#attach(c), (e: unknown) => {
        this.connecting = false;
        this.destroy(asError(e));
        return undefined;
      });
    } else {
      this.connecting = false;
      this.#conn = conn;
      this.#ready = Promise.resolve(conn);
    }
  }

  #attach(conn: Deno.UnixConn): Deno.UnixConn | undefined {
    if (this.destroyed) {
      conn.close();
      return undefined;
    }
    this.#conn = conn;
    this.connecting = false;
    this.emit("connect");
    this.emit("ready");
    if (this.#reading) void this.#pump(conn);
    return conn;
  }

  override _read(): void {
    if (this.#reading) return;
    this.#reading = true;
    if (this.#conn) void this.#pump(this.#conn);
  }

  async #pump(conn: Deno.UnixConn): Promise<void> {
    while (this.#reading && !this.destroyed) {
      let n: number | null;
      try {
        n = await conn.read(this.#buffer);
      } catch (e) {
        if (!this.destroyed) this.destroy(asError(e));
        return;
      }
      if (this.destroyed) return;
      if (n === null) {
        this.#reading = false;
        this.push(null);
        return;
      }
      this.bytesRead += n;
      let chunk: Uint8Array;
      if (n < COPY_BELOW) chunk = this.#buffer.slice(0, n);
      else {
        chunk = this.#buffer.subarray(0, n);
        this.#buffer = new Uint8Array(READ_CHUNK);
      }
      if (!this.push(chunk)) this.#reading = false;
    }
  }

  override _write(
    chunk: Uint8Array,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.#writeAll(chunk).then(() => callback(), (e) => callback(asError(e)));
  }

  override _writev(
    chunks: { chunk: Uint8Array }[],
    callback: (error?: Error | null) => void,
  ): void {
    const total = chunks.reduce((n, c) => n + c.chunk.byteLength, 0);
    const joined = new Uint8Array(total);
    let at = 0;
    for (const { chunk } of chunks) {
      joined.set(chunk, at);
      at += chunk.byteLength;
    }
    this.#writeAll(joined).then(() => callback(), (e) => callback(asError(e)));
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    const conn = this.#conn ?? await this.#ready;
    if (!conn) throw new Error("the Unix socket never connected");
    let at = 0;
    while (at < bytes.byteLength) {
      const n = await conn.write(bytes.subarray(at));
      at += n;
      this.bytesWritten += n;
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#ready.then(async (conn) => {
      if (conn && !this.#closed) await conn.closeWrite().catch(() => {});
    }).then(() => callback(), (e) => callback(asError(e)));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#reading = false;
    this.#buffer = EMPTY; // a stream something still holds after close keeps no 64 KiB buffer
    this.#closeOnce();
    callback(error);
  }

  #closeOnce(): void {
    if (this.#closed || !this.#conn) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by the peer's end: nothing left to release.
    }
  }

  /** Keeps the event loop alive while the socket is open (the default). */
  ref(): this {
    this.#conn?.ref();
    return this;
  }

  /** Lets the process exit with the socket open. */
  unref(): this {
    this.#conn?.unref();
    return this;
  }

  /** No-op: there is no Nagle on a Unix socket. Present because node:http2 calls it. */
  setNoDelay(_noDelay?: boolean): this {
    return this;
  }

  /** No-op: keep-alive is a TCP notion. Present because node:http2 may call it. */
  setKeepAlive(_enable?: boolean, _delayMs?: number): this {
    return this;
  }

  /** No-op: idle timeouts are the HTTP/2 session's business here. */
  setTimeout(_ms: number, _callback?: () => void): this {
    return this;
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** Connects to the Unix socket at `path`; usable at once as node:http2's `createConnection`. */
export function connectUnixStream(path: string): UnixStream {
  return new UnixStream(Deno.connect({ transport: "unix", path }));
}

/** A listening Unix socket that hands each connection over as a {@link UnixStream}. */
export interface UnixStreamListener {
  readonly path: string;
  /** Stops accepting; connections already handed over stay open. */
  close(): Promise<void>;
}

/**
 * Listens on `path` (which must not exist) and calls `onConnection` with each
 * accepted connection, e.g. `(s) => http2Server.emit("connection", s)`.
 * @throws Deno.errors.AddrInUse and the like when the socket cannot be bound.
 */
export function listenUnixStream(
  path: string,
  onConnection: (stream: UnixStream) => void,
): UnixStreamListener {
  const listener = Deno.listen({ transport: "unix", path });
  const accepting = (async () => {
    for (;;) {
      let conn: Deno.UnixConn;
      try {
        conn = await listener.accept();
      } catch {
        return; // closed
      }
      onConnection(new UnixStream(conn));
    }
  })();
  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= (async () => {
        try {
          listener.close();
        } catch {
          // Already closed.
        }
        await accepting;
      })();
      return closing;
    },
  };
}
