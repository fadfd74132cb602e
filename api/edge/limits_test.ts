import { equal, ok } from "node:assert/strict";
import http2 from "node:http2";
import { Code, type ConnectError } from "@connectrpc/connect";
import { startApiFixture, withTimeout } from "../testing.ts";
import type { ApiFixture } from "../testing.ts";
import { connectRawH2 } from "./testdata/raw_h2_client.ts";

/** One raw call with curl (HTTP/2, mTLS as admin): grpc-status/-message from trailers, and the body. */
async function rawGrpc(
  f: ApiFixture,
  path: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ httpStatus: number; status: string; message: string; body: string }> {
  const dir = f.pki.dir;
  const all = { "content-type": "application/grpc", te: "trailers", ...headers };
  const child = new Deno.Command("curl", {
    args: [
      "-s",
      "--http2",
      "--max-time",
      "10",
      "--cacert",
      `${dir}/ca.crt`,
      "--cert",
      `${dir}/os-admin.crt`,
      "--key",
      `${dir}/os-admin.key`,
      ...Object.entries(all).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
      "--data-binary",
      "@-",
      "-D",
      "/dev/stderr",
      `https://${f.endpoint}${path}`,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(body);
  await w.close();
  const out = await withTimeout(child.output(), 15000, `curl ${path}`);
  const head = new TextDecoder().decode(out.stderr);
  const field = (name: string) =>
    [...head.matchAll(new RegExp(`^${name}: (.*)$`, "gim"))].map((m) => m[1].trim()).at(-1) ?? "";
  return {
    httpStatus: Number(/^HTTP\/2 (\d+)/m.exec(head)?.[1]),
    status: field("grpc-status"),
    message: decodeURIComponent(field("grpc-message")),
    body: new TextDecoder().decode(out.stdout),
  };
}

/** The SETTINGS_MAX_CONCURRENT_STREAMS apid advertises. */
async function advertisedMaxStreams(f: ApiFixture): Promise<number | undefined> {
  const admin = f.pki.clients["os:admin"];
  const session = http2.connect(`https://${f.endpoint}`, {
    ca: f.pki.ca.certPem,
    cert: admin.certPem,
    key: admin.keyPem,
  });
  try {
    return await withTimeout(
      new Promise((resolve, reject) => {
        session.once("error", reject);
        session.once("remoteSettings", (s) => resolve(s.maxConcurrentStreams));
      }),
      5000,
      "remote settings",
    );
  } finally {
    session.destroy();
  }
}

const utf8 = (text: string) => new TextEncoder().encode(text);

/** A gRPC frame: flag byte, 4-byte big-endian length, payload. */
function frame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

Deno.test("limits: oversized → ResourceExhausted; malformed → the protocol's code, apid stays up", async () => {
  const f = await startApiFixture({ readMaxBytes: 64 * 1024, maxConcurrentStreams: 8 });
  try {
    const c = f.client();
    try {
      await c.api.get({ type: "ms", id: "x".repeat(100 * 1024) });
      throw new Error("expected failure");
    } catch (e) {
      equal((e as ConnectError).code, Code.ResourceExhausted, String(e));
    }
    // Still serving after the refusal.
    equal((await c.api.version({})).version, "0.1.0-test");
    c.close();

    // Undecodable protobuf is the caller's mistake: InvalidArgument, as malformed JSON.
    const bytes = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]);
    const r = await rawGrpc(f, "/machined.v1.MachineService/Get", frame(bytes));
    equal(r.status, String(Code.InvalidArgument), r.message);
    ok(r.message.startsWith("parse binary"), r.message);
    const s = await rawGrpc(f, "/machined.v1.MachineService/Watch", frame(bytes));
    equal(s.status, String(Code.InvalidArgument), `server stream: ${s.message}`);
    // The same body over Connect (unary, binary): HTTP 400 invalid_argument.
    const proto = { "content-type": "application/proto" };
    const p = await rawGrpc(f, "/machined.v1.MachineService/Get", bytes, proto);
    equal(p.httpStatus, 400, p.body);
    equal(JSON.parse(p.body).code, "invalid_argument", p.body);
    // Connect streaming: the end-stream message says invalid_argument.
    const streaming = { "content-type": "application/connect+proto" };
    const cs = await rawGrpc(f, "/machined.v1.MachineService/Watch", frame(bytes), streaming);
    ok(cs.body.includes('"code":"invalid_argument"'), cs.body);
    // gRPC-Web: the trailer frame in the body says grpc-status 3.
    const web = { "content-type": "application/grpc-web+proto" };
    const gw = await rawGrpc(f, "/machined.v1.MachineService/Get", frame(bytes), web);
    ok(/grpc-status: ?3\r\n/.test(gw.body), JSON.stringify(gw.body));
    // A truncated frame (length says 100, 3 bytes follow).
    const truncated = new Uint8Array([0, 0, 0, 0, 100, 1, 2, 3]);
    const t = await rawGrpc(f, "/machined.v1.MachineService/Get", truncated);
    ok(t.status !== "" && t.status !== "0", `truncated frame: ${t.status} ${t.message}`);
    // Connect JSON that is not JSON → invalid_argument.
    const json = { "content-type": "application/json" };
    const j = await rawGrpc(f, "/machined.v1.MachineService/Version", utf8("{"), json);
    equal(JSON.parse(j.body).code, "invalid_argument", j.body);
    // A method that does not exist.
    const u = await rawGrpc(f, "/machined.v1.MachineService/NoSuchMethod", frame(new Uint8Array()));
    equal(u.httpStatus, 404); // gRPC clients read an HTTP 404 as Unimplemented
    equal(await advertisedMaxStreams(f), 8);
    equal((await f.client().api.version({})).version, "0.1.0-test");
  } finally {
    await f.close();
  }
});

Deno.test("limits: an answer before the request's end (unknown method) reaches the client, and its stream ends without RST_STREAM", async () => {
  const f = await startApiFixture();
  const admin = f.pki.clients["os:admin"];
  const c = await withTimeout(
    connectRawH2({
      host: "127.0.0.1",
      port: f.apid.port,
      ca: f.pki.ca.certPem,
      cert: admin.certPem,
      key: admin.keyPem,
    }),
    5000,
    "connect",
  );
  try {
    // Only the HEADERS: machined answers 404 before the body, as it did when
    // curl's DATA frame was late (the flake of the test above).
    const id = c.open("/machined.v1.MachineService/NoSuchMethod", new Uint8Array(), {
      endStream: false,
    });
    const s = c.streams.get(id)!;
    await withTimeout(
      (async () => {
        while (!s.ended) await c.ping();
      })(),
      5000,
      "the answer",
    );
    c.finish(id, new Uint8Array());
    await withTimeout(c.ping(), 5000, "ping after the body");
    // A reset here (even NO_ERROR) makes curl 7.88 drop the answer: exit 92, no status.
    equal(s.resetCode, undefined, `RST_STREAM ${s.resetCode}`);
    equal(s.headerBlocks, 1);
    // The connection still serves.
    const next = c.open("/machined.v1.MachineService/NoSuchMethod", new Uint8Array());
    await withTimeout(
      (async () => {
        while (!c.streams.get(next)!.ended) await c.ping();
      })(),
      5000,
      "a second call",
    );
    equal(c.streams.get(next)!.headerBlocks, 1);
  } finally {
    c.close();
    await f.close();
  }
});

Deno.test("limits: a server-side deadline ends a Watch with DeadlineExceeded and frees the store watch", async () => {
  const f = await startApiFixture();
  try {
    const started = performance.now();
    // No client-side timer: only the grpc-timeout header bounds the call.
    const r = await rawGrpc(
      f,
      "/machined.v1.MachineService/Watch",
      frame(new Uint8Array([0x0a, 0x02, 0x6d, 0x73])),
      {
        "grpc-timeout": "300m",
      },
    );
    equal(r.status, String(Code.DeadlineExceeded), r.message);
    ok(performance.now() - started < 3000);
    // The deadline reached machined too (forwarded as its own grpc-timeout).
    await withTimeout(
      (async () => {
        while (f.store.watchCount > 0) await new Promise((res) => setTimeout(res, 10));
      })(),
      5000,
      "store watch released",
    );
  } finally {
    await f.close();
  }
});
