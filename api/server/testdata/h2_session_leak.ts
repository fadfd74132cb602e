/**
 * Run by h2_session_release_test.ts with `--v8-flags=--expose-gc`: serves N
 * HTTP/2 connections over a Unix socket (node:http2 over UnixStream, as
 * machined's internal server does), each closed by its client after one
 * request, then collects garbage and prints, as one JSON line, how many of
 * the server's UnixStreams were collected, V8's external memory and how much
 * malloc's in-use figure grew (client and server sessions both: ~50 KiB a
 * connection with or without `--release`, the native session state Deno
 * 2.9.3 never frees on either side).
 * `--release` applies releaseOnClose to each session.
 */
import http2 from "node:http2";
import { join } from "node:path";
import { connectUnixStream, listenUnixStream } from "../../../platform/unix_stream/mod.ts";
import { releaseOnClose } from "../h2_session_release.ts";
import { NativeMallocBackend } from "../../../platform/memory/mod.ts";

const count = Number(Deno.args[0] ?? 50);
const release = Deno.args.includes("--release");
const dir = await Deno.makeTempDir({ prefix: "h2-leak-" });
const path = join(dir, "s.sock");
let collected = 0;
const registry = new FinalizationRegistry(() => collected++);
const server = http2.createServer({}, (_req, res) => {
  res.writeHead(200);
  res.end("ok");
});
let armed = 0;
const malloc = new NativeMallocBackend();
const gc = (globalThis as unknown as { gc: () => void }).gc;
gc();
const inUseBefore = malloc.heap().inUse;
server.on("session", (s: http2.Http2Session) => {
  s.on("error", () => {});
  if (release && releaseOnClose(s) === "armed") armed++;
});
const listener = listenUnixStream(path, (stream) => {
  registry.register(stream, 0);
  server.emit("connection", stream);
});
for (let i = 0; i < count; i++) {
  const c = http2.connect("http://localhost", { createConnection: () => connectUnixStream(path) });
  c.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    const r = c.request({ ":path": "/" });
    r.on("data", () => {});
    r.on("end", resolve);
    r.on("error", reject);
    r.end();
  });
  await new Promise<void>((r) => c.close(r));
}
for (let i = 0; i < 5 && collected < count; i++) {
  await new Promise((r) => setTimeout(r, 100));
  gc();
}
await new Promise((r) => setTimeout(r, 50)); // finalizers run after a turn
console.log(
  JSON.stringify({
    count,
    armed,
    collected,
    externalBytes: Deno.memoryUsage().external,
    mallocInUseGrowth: malloc.heap().inUse - inUseBefore,
  }),
);
await listener.close();
await Deno.remove(dir, { recursive: true });
Deno.exit(0);
