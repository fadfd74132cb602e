/**
 * Opens and closes Unix sockets three ways for unix_stream_close_test.ts,
 * which runs this under strace: `adapter` (this module's UnixStream),
 * `node-net` (node:net, which Deno 2.9.3 closes twice), `http2` (node:http2
 * over the adapter, as machined and its edge talk).
 */
import net from "node:net";
import http2 from "node:http2";
import { join } from "node:path";
import { connectUnixStream, listenUnixStream, type UnixStream } from "../mod.ts";

const dir = Deno.args[1];
const mode = Deno.args[0];
const path = join(dir, `${mode}.sock`);

if (mode === "adapter") {
  const listener = listenUnixStream(path, (s) => s.pipe(s));
  for (let i = 0; i < 3; i++) {
    const c = connectUnixStream(path);
    c.on("data", () => {});
    await new Promise((resolve) => c.end("hello", () => resolve(undefined)));
    await new Promise((resolve) => c.on("close", resolve));
  }
  await listener.close();
} else if (mode === "node-net") {
  const server = net.createServer((s) => s.end());
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  const c = net.connect(path);
  c.on("data", () => {});
  await new Promise((resolve) => c.on("close", resolve));
  await new Promise((resolve) => server.close(resolve));
} else if (mode === "http2") {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  const sockets: UnixStream[] = [];
  const listener = listenUnixStream(path, (s) => {
    sockets.push(s);
    server.emit("connection", s);
  });
  for (let i = 0; i < 3; i++) {
    const session = http2.connect("http://x", { createConnection: () => connectUnixStream(path) });
    const req = session.request({ ":path": "/" });
    req.resume();
    await new Promise((resolve) => req.on("end", resolve));
    await new Promise<void>((resolve) => session.close(resolve));
  }
  for (const s of sockets) s.destroy();
  await listener.close();
}
console.log(`closed (${mode})`);
