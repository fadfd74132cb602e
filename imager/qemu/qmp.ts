/**
 * A minimal QEMU Machine Protocol client over a unix socket: the greeting
 * and capabilities handshake, commands with their replies, and a promise
 * that settles when QEMU closes the socket (which it does as it exits, so
 * a stop can await the exit instead of polling for it).
 */

/** A QMP command that QEMU answered with an error, or a broken connection. */
export class QmpError extends Error {
  override name = "QmpError";
  constructor(readonly command: string, readonly reason: string, options?: ErrorOptions) {
    super(`QMP command "${command}" failed: ${reason}`, options);
  }
}

/** A connected, negotiated QMP session. */
export interface QmpClient {
  /** Send `command` and resolve with its `return` value. */
  execute(command: string, args?: Record<string, unknown>): Promise<unknown>;
  /** Settles when the socket reaches end of file (QEMU exited or closed it). */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Connect to the QMP socket at `path` and negotiate capabilities.
 * @throws Deno.errors.NotFound / ConnectionRefused when QEMU is not listening.
 */
export async function connectQmp(path: string): Promise<QmpClient> {
  const conn = await Deno.connect({ transport: "unix", path });
  const waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void; cmd: string }[] = [];
  let greeted: (() => void) | undefined;
  const greeting = new Promise<void>((r) => (greeted = r));
  let isClosed = false;

  const closed = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    const chunk = new Uint8Array(4096);
    try {
      while (true) {
        const n = await conn.read(chunk);
        if (n === null) break;
        buf += decoder.decode(chunk.subarray(0, n), { stream: true });
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) dispatch(JSON.parse(line));
        }
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.BadResource || e instanceof Deno.errors.ConnectionReset)) {
        for (const w of waiting.splice(0)) w.reject(new QmpError(w.cmd, String(e), { cause: e }));
      }
    } finally {
      for (const w of waiting.splice(0)) w.reject(new QmpError(w.cmd, "connection closed"));
      greeted?.();
      close();
    }
  })();

  function dispatch(msg: Record<string, unknown>) {
    if ("QMP" in msg) return greeted?.();
    if ("event" in msg) return;
    const w = waiting.shift();
    if (!w) return;
    if ("error" in msg) {
      const err = msg.error as { desc?: string; class?: string };
      w.reject(new QmpError(w.cmd, err.desc ?? err.class ?? "unknown error"));
    } else w.resolve(msg.return);
  }

  function close() {
    if (isClosed) return;
    isClosed = true;
    try {
      conn.close();
    } catch { /* already closed */ }
  }

  async function execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    if (isClosed) throw new QmpError(command, "connection closed");
    const reply = new Promise<unknown>((resolve, reject) =>
      waiting.push({ resolve, reject, cmd: command })
    );
    const msg = JSON.stringify(args ? { execute: command, arguments: args } : { execute: command });
    await conn.write(new TextEncoder().encode(msg + "\n"));
    return await reply;
  }

  await greeting;
  await execute("qmp_capabilities");
  return { execute, closed, close };
}
