/**
 * The edge's budgets through the real machined-edge, each at its limit and
 * one past it, with small numbers given as flags: slow handshakes from
 * several loopback sources (client sockets bound to 127.0.0.x) evict each
 * other while a certificate client is served; connections and streams over
 * budget get ResourceExhausted naming the budget while the others keep
 * working; ALPN decides the protocol.
 */
import { equal, match, ok } from "node:assert/strict";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { WatchRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { withTimeout } from "../testing.ts";
import { connectRawH2, type RawClient } from "./testdata/raw_h2_client.ts";
import { edgeBinaryBuilt } from "./testing.ts";
import {
  afterBytes,
  client,
  counter,
  curl,
  deepClosed,
  frame,
  h2FrameTypes,
  metrics,
  refusal,
  sleep,
  type Slow,
  slowHandshake,
  until,
  VERSION,
  version,
  withEdge,
} from "../testing_budgets.ts";

const ignore = !edgeBinaryBuilt();
const WATCH = "/machined.v1.MachineService/Watch";
const watchRequest = toBinary(
  WatchRequestSchema,
  create(WatchRequestSchema, { type: "ControllerStatus", namespace: "runtime" }),
);

Deno.test({
  name:
    "edge budgets: slow handshakes from several sources evict each other, oldest of the largest source first; a certificate client is served (needs the edge binary)",
  ignore,
}, async () => {
  await withEdge(
    { maxHandshakes: 8, maxHandshakesPerSource: 8, handshakeTimeoutMs: 60_000 },
    async (f, edge) => {
      // At the limit: 8 pending, 5 from 127.0.0.2 (the oldest first), 3 from 127.0.0.3.
      const slow: Slow[] = [];
      for (const from of ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"]) {
        slow.push(await slowHandshake(edge.port, from));
      }
      for (const from of ["127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.2"]) {
        slow.push(await slowHandshake(edge.port, from));
      }
      await sleep(300);
      equal(slow.filter((s) => s.isClosed()).length, 0, "nothing evicted at the limit");
      // One past: the certificate client is served, and 127.0.0.2's oldest made room.
      const r = await version(f, edge.port);
      equal(r.status, "0", r.message);
      await withTimeout(slow[0].closed, 5000, "the oldest of 127.0.0.2 evicted");
      const text = await metrics(f, edge.port);
      equal(counter(text, "handshake_budget"), 1, text);
      match(text, /\nmachined_edge_handshakes_pending 7\n/);
      equal(slow.filter((s) => s.isClosed()).length, 1, "one evicted for one newcomer");
      // A flood from one source only evicts older handshakes, never locks the client out.
      for (let i = 0; i < 12; i++) slow.push(await slowHandshake(edge.port, "127.0.0.4"));
      equal((await version(f, edge.port, "os-reader")).status, "0");
      slow.forEach((s) => s.socket.destroy());
    },
  );
});

Deno.test({
  name:
    "edge budgets: a NAT'd client gets its turn while its own address holds the per-source handshake budget; other sources keep theirs (needs the edge binary)",
  ignore,
}, async () => {
  await withEdge(
    { maxHandshakes: 64, maxHandshakesPerSource: 4, handshakeTimeoutMs: 60_000 },
    async (f, edge) => {
      const other = [
        await slowHandshake(edge.port, "127.0.0.3"),
        await slowHandshake(edge.port, "127.0.0.3"),
      ];
      const own: Slow[] = [];
      for (let i = 0; i < 4; i++) own.push(await slowHandshake(edge.port, "127.0.0.1"));
      await sleep(300);
      equal([...own, ...other].filter((s) => s.isClosed()).length, 0, "at the limit");
      const r = await version(f, edge.port, "os-reader", "127.0.0.1");
      equal(r.status, "0", r.message);
      await withTimeout(own[0].closed, 5000, "the oldest of 127.0.0.1 evicted");
      const text = await metrics(f, edge.port);
      equal(counter(text, "handshake_source_budget"), 1, text);
      equal(counter(text, "handshake_budget"), 0, text);
      deepClosed(other, [false, false]);
      deepClosed(own, [true, false, false, false]);
      [...own, ...other].forEach((s) => s.socket.destroy());
    },
  );
});

Deno.test({
  name:
    "edge budgets: a connection over the node's connection budget gets ResourceExhausted naming it; the open ones keep working (needs the edge binary)",
  ignore,
}, async () => {
  await withEdge({ maxConnections: 2 }, async (f, edge) => {
    const held = [client(f, edge), client(f, edge)];
    const third = client(f, edge);
    try {
      for (const c of held) equal((await c.api.version({})).version, "0.1.0-test");
      const e = await refusal(third.api.version({}));
      equal(e.code, Code.ResourceExhausted, e.message);
      equal(e.rawMessage, "connection budget: 2 connections open on this node (limit 2)");
      for (const c of held) equal((await c.api.version({})).version, "0.1.0-test");
      held[0].close();
      // Room again once the edge has seen the close.
      await until(
        "a connection admitted",
        async () => (await version(f, edge.port)).status === "0",
      );
      held[1].close();
      third.close();
      await until("connections closed", async () => {
        const r = await curl(f, edge.port, { path: "/metrics", cert: "os-reader", headers: {} });
        return counter(r.body, "connection_budget") >= 1;
      });
    } finally {
      for (const c of [...held, third]) c.close();
    }
  });
});

Deno.test({
  name:
    "edge budgets: connections per source: the next one from that address is refused, another address is served (needs the edge binary)",
  ignore,
}, async () => {
  await withEdge({ maxConnectionsPerClient: 2 }, async (f, edge) => {
    const held = [client(f, edge), client(f, edge)];
    try {
      for (const c of held) equal((await c.api.version({})).version, "0.1.0-test");
      const r = await version(f, edge.port, "os-admin", "127.0.0.1");
      equal(r.status, String(Code.ResourceExhausted), JSON.stringify(r));
      equal(r.message, "connection budget: 2 connections open from 127.0.0.1 (limit 2)");
      equal((await version(f, edge.port, "os-admin", "127.0.0.2")).status, "0");
      for (const c of held) equal((await c.api.version({})).version, "0.1.0-test");
    } finally {
      held.forEach((c) => c.close());
    }
  });
});

Deno.test({
  name:
    "edge budgets: streams per client certificate and per node: the next is ResourceExhausted and not forwarded, others unaffected, room again after a close (needs the edge binary)",
  ignore,
}, async () => {
  // Watch forwarded stream by stream (no fan-out), so machined's count shows what was forwarded.
  const limits = { maxStreamsPerClient: 3, maxStreams: 5, watchFanout: "machined" } as const;
  await withEdge(limits, async (f, edge) => {
    const raw = (role: "os:reader" | "os:admin") =>
      connectRawH2({
        host: "127.0.0.1",
        port: edge.port,
        ca: f.pki.ca.certPem,
        cert: f.pki.clients[role].certPem,
        key: f.pki.clients[role].keyPem,
      });
    const open: RawClient[] = [];
    try {
      const reader = await raw("os:reader");
      open.push(reader);
      for (let i = 0; i < 3; i++) reader.open(WATCH, watchRequest);
      await until(
        "3 Watch streams in machined",
        () => Promise.resolve(f.internal.watchStreams === 3),
      );
      // One past the reader's budget: refused at the edge, machined never sees it.
      const r = await curl(f, edge.port, {
        path: WATCH,
        cert: "os-reader",
        body: frame(watchRequest),
      });
      equal(r.status, String(Code.ResourceExhausted), JSON.stringify(r));
      equal(r.message, "stream budget: 3 open streams for this client certificate (limit 3)");
      equal(f.internal.watchStreams, 3);
      // Another certificate is not affected; then it fills the node's budget (5).
      equal((await version(f, edge.port)).status, "0");
      const admin = await raw("os:admin");
      open.push(admin);
      for (let i = 0; i < 2; i++) admin.open(WATCH, watchRequest);
      await until(
        "5 Watch streams in machined",
        () => Promise.resolve(f.internal.watchStreams === 5),
      );
      const n = await curl(f, edge.port, { path: WATCH, body: frame(watchRequest) });
      equal(n.status, String(Code.ResourceExhausted), JSON.stringify(n));
      equal(n.message, "stream budget: 5 open streams on this node (limit 5)");
      equal(f.internal.watchStreams, 5);
      // The reader leaves: its three slots come back.
      reader.close();
      await until(
        "reader served again",
        async () => (await version(f, edge.port, "os-reader")).status === "0",
      );
      const text = await metrics(f, edge.port);
      equal(counter(text, "stream_client_budget"), 1, text);
      equal(counter(text, "stream_budget"), 1, text);
    } finally {
      open.forEach((c) => c.close());
    }
  });
});

Deno.test({
  name:
    "edge budgets: ALPN decides: HTTP/1.1 bytes on an h2 connection are a connection error; http/1.1 and no ALPN serve HTTP/1.1 (needs the edge binary)",
  ignore,
}, async () => {
  await withEdge({}, async (f, edge) => {
    const request =
      `POST ${VERSION} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`;
    const h2 = await afterBytes(f, edge.port, ["h2"], request);
    equal(h2.alpn, "h2");
    const text = new TextDecoder().decode(h2.bytes);
    ok(!text.includes("HTTP/1.1"), JSON.stringify(text));
    // Only HTTP/2 frames: the server's SETTINGS, at most a GOAWAY; then the close.
    ok(h2FrameTypes(h2.bytes).every((t) => t === 0x4 || t === 0x7), JSON.stringify(text));
    const h1 = await afterBytes(
      f,
      edge.port,
      ["http/1.1"],
      request.replace("host: x", "host: x\r\nconnection: close"),
    );
    equal(h1.alpn, "http/1.1");
    match(new TextDecoder().decode(h1.bytes), /^HTTP\/1\.1 200 /);
    const json = { "content-type": "application/json" };
    const body = new TextEncoder().encode("{}");
    for (const alpn of [true, false]) {
      const r = await curl(f, edge.port, { path: VERSION, http1: true, alpn, headers: json, body });
      equal(r.httpStatus, 200, `${alpn ? "ALPN http/1.1" : "no ALPN"}: ${r.body}`);
      match(r.body, /0\.1\.0-test/);
    }
  });
});
