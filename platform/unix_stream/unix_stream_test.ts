import assert from "node:assert/strict";
import http2 from "node:http2";
import { join } from "node:path";
import { connectUnixStream, listenUnixStream, type UnixStream } from "./mod.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "unix-stream-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function collect(s: UnixStream): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  s.on("data", (c: Uint8Array) => parts.push(c));
  return new Promise((resolve, reject) => {
    s.on("end", () => {
      const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let at = 0;
      for (const p of parts) out.set(p, (at += p.byteLength) - p.byteLength);
      resolve(out);
    });
    s.on("error", reject);
  });
}

Deno.test("a Unix stream carries bytes both ways and counts what crossed the socket", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "echo.sock");
    const listener = listenUnixStream(path, (s) => s.pipe(s));
    const client = connectUnixStream(path);
    assert.equal(client.connecting, true);
    const payload = new Uint8Array(300_000).map((_, i) => i % 251);
    const echoed = collect(client);
    client.end(payload);
    const got = await echoed;
    assert.deepEqual(got, payload);
    assert.equal(client.bytesWritten, payload.byteLength);
    assert.equal(client.bytesRead, payload.byteLength);
    assert.equal(client.connecting, false);
    await listener.close();
  });
});

Deno.test("connecting to a socket that is not there fails with the path's error", async () => {
  await withDir(async (dir) => {
    const client = connectUnixStream(join(dir, "absent.sock"));
    const error = await new Promise<Error>((resolve) => client.on("error", resolve));
    assert.ok(error instanceof Deno.errors.NotFound, String(error));
    assert.equal(client.destroyed, true);
  });
});

Deno.test("node:http2 serves and calls over Unix streams; the session's socket reports bytesWritten", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "h2.sock");
    const server = http2.createServer();
    server.on("stream", (stream) => {
      stream.respond({ ":status": 200 });
      stream.end("x".repeat(100_000));
    });
    const serverSockets: UnixStream[] = [];
    const listener = listenUnixStream(path, (s) => {
      serverSockets.push(s);
      server.emit("connection", s);
    });
    const session = http2.connect("http://machined", {
      createConnection: () => connectUnixStream(path),
    });
    for (let i = 0; i < 3; i++) {
      const req = session.request({ ":path": `/${i}` });
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      await new Promise((resolve) => req.on("end", resolve));
      assert.equal(body.length, 100_000);
    }
    const written = (session.socket as unknown as { bytesWritten: number }).bytesWritten;
    assert.ok(written > 0, `client bytesWritten ${written}`);
    assert.ok(
      serverSockets[0].bytesWritten > 300_000,
      `server bytesWritten ${serverSockets[0].bytesWritten}`,
    );
    await new Promise<void>((resolve) => session.close(resolve));
    for (const s of serverSockets) s.destroy();
    await listener.close();
  });
});

Deno.test("a reader that stops reading holds the writer back instead of buffering without bound", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "slow.sock");
    let server: UnixStream | undefined;
    const accepted = new Promise<void>((resolve) => {
      const listener = listenUnixStream(path, (s) => {
        server = s;
        resolve();
        void listener.close();
      });
    });
    const client = connectUnixStream(path);
    await accepted;
    client.pause();
    const chunk = new Uint8Array(64 * 1024);
    const total = 16 * 1024 * 1024;
    let offered = 0;
    while (offered < total) {
      offered += chunk.byteLength;
      if (server!.write(chunk)) continue;
      const drained = await Promise.race([
        new Promise<boolean>((resolve) => server!.once("drain", () => resolve(true))),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
      ]);
      if (!drained) break;
    }
    // The kernel's socket buffers take some; then the writer waits: neither side reads ahead.
    assert.ok(offered < total, `the writer never waited (${offered} bytes offered)`);
    assert.ok(server!.bytesWritten < 8 * 1024 * 1024, `written ${server!.bytesWritten}`);
    assert.ok(client.readableLength <= 256 * 1024, `client buffered ${client.readableLength}`);
    client.destroy();
    server!.destroy();
  });
});

Deno.test("closing a listener stops accepting and resolves once", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "close.sock");
    const listener = listenUnixStream(path, () => {});
    await Promise.all([listener.close(), listener.close()]);
    const client = connectUnixStream(path);
    const error = await new Promise<Error>((resolve) => client.on("error", resolve));
    assert.ok(error instanceof Error);
  });
});
