/**
 * The Watch fan-out in machined-edge (`--watch-fanout=edge`, the default),
 * end to end: the real edge binary over mTLS in front of a real internal API
 * server. Clients of one (request, role) share one upstream Watch (machined's
 * hub sees one stream), see the same messages (snapshot, `bootstrapped`, live
 * events), a late joiner gets the current contents, a client that stops
 * reading overflows alone and gets the contents again, roles are redacted
 * apart, and errors and deadlines end streams with machined's codes.
 */
import http2 from "node:http2";
import { join } from "node:path";
import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  WatchRequestSchema,
  type WatchResponse,
  WatchResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { EventBus } from "../../events/mod.ts";
import { MetricsRegistry } from "../../metrics/mod.ts";
import type { MachineStore } from "../../resources/mod.ts";
import type { Role } from "../../pki/mod.ts";
import {
  createTestPki,
  fakeServiceSpec,
  RecordingActions,
  seededStore,
  withTimeout,
} from "../testing.ts";
import { createClientConfigIssuer, startInternalApiServer, WATCH_PATH } from "../server/mod.ts";
import { type H2Client, h2Client } from "../server/testing_h2.ts";
import { REDACTED } from "../auth/mod.ts";
import { createMachineClient, type MachineClient } from "../client/mod.ts";
import { edgeBinaryBuilt, spawnEdge } from "./testing.ts";
import type { EdgeOptions } from "./edge_process_spec.ts";

const built = edgeBinaryBuilt();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PTR = { type: "ControllerStatus" as const, namespace: "runtime", id: "time.SyncController" };

async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  await withTimeout(
    (async () => {
      while (!cond()) await sleep(5);
    })(),
    ms,
    what,
  );
}

interface Fixture {
  readonly store: MachineStore;
  /** Watch streams machined serves (its hub's cursors). */
  readonly machinedStreams: () => number;
  /** A new mTLS connection to the edge as `role`. */
  connect(role?: Role): H2Client;
  /** A Connect gRPC client (machinectl's) to the edge as `role`. */
  client(role?: Role): MachineClient;
  /** The edge's fan-out metrics, read through GET /metrics. */
  edgeMetrics(): Promise<Record<string, number>>;
  /** Stops machined's internal server (its sessions cut) and starts a new one on the socket. */
  restartMachined(): Promise<void>;
}

async function withEdge(run: (f: Fixture) => Promise<void>, limits?: EdgeOptions): Promise<void> {
  const pki = await createTestPki();
  const store = seededStore();
  const socketPath = join(pki.dir, "run", "api.sock");
  const registry = new MetricsRegistry();
  const startMachined = () =>
    startInternalApiServer({
      socketPath,
      registry,
      deps: {
        store,
        metrics: registry,
        actions: new RecordingActions(),
        events: new EventBus(),
        clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
      },
    });
  let internal = await startMachined();
  const edge = await spawnEdge({ pkiDir: pki.dir, socketPath, port: 0, limits });
  const sessions: http2.ClientHttp2Session[] = [];
  const clients: MachineClient[] = [];
  const session = (role: Role) => {
    const c = pki.clients[role];
    const s = http2.connect(`https://127.0.0.1:${edge.port}`, {
      ca: pki.ca.certPem,
      cert: c.certPem,
      key: c.keyPem,
    });
    sessions.push(s);
    return s;
  };
  const edgeMetrics = async () => {
    const s = session("os:reader");
    s.on("error", () => {});
    const text = await new Promise<string>((resolve, reject) => {
      const req = s.request({ ":method": "GET", ":path": "/metrics" });
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => body += c);
      req.on("end", () => resolve(body));
      req.on("error", reject);
      req.end();
    });
    s.close();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^(machined_edge_watch_\w+) (\d+)$/gm)) out[m[1]] = Number(m[2]);
    return out;
  };
  try {
    await run({
      store,
      machinedStreams: () => internal.watchStreams,
      connect: (role = "os:reader") => h2Client(session(role)),
      client: (role = "os:reader") => {
        const c = createMachineClient({
          endpoint: `127.0.0.1:${edge.port}`,
          caPem: pki.ca.certPem,
          certPem: pki.clients[role].certPem,
          keyPem: pki.clients[role].keyPem,
        });
        clients.push(c);
        return c;
      },
      edgeMetrics,
      restartMachined: async () => {
        await internal.close();
        internal = await startMachined();
      },
    });
  } finally {
    for (const s of sessions) s.destroy();
    for (const c of clients) c.close();
    await edge.close();
    await internal.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
}

/** A Watch call whose messages are collected, decoded. */
function watch(
  c: H2Client,
  req: { type: string; namespace?: string; id?: string } = { type: "controllers" },
  headers = {},
) {
  const messages: WatchResponse[] = [];
  const raw: Uint8Array[] = [];
  const body = toBinary(WatchRequestSchema, create(WatchRequestSchema, req));
  const call = c.call(WATCH_PATH, body, (b) => {
    raw.push(b.slice());
    messages.push(fromBinary(WatchResponseSchema, b));
  }, headers);
  return { ...call, messages, raw };
}

function show(m: WatchResponse): string {
  switch (m.event.case) {
    case "created":
    case "destroyed":
      return `${m.event.case}:${m.event.value.metadata?.id}`;
    case "updated":
      return `updated:${m.event.value.resource?.metadata?.version}`;
    default:
      return m.event.case ?? "none";
  }
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

Deno.test({
  name:
    "edge fan-out: two clients see the same messages over ONE machined Watch; a late joiner gets the current contents, then live events",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, connect, edgeMetrics }) => {
      const a = watch(connect());
      const b = watch(connect());
      await until("bootstrapped", () => a.messages.length === 3 && b.messages.length === 3);
      for (let i = 0; i < 5; i++) {
        await store.modify(PTR, "test", (s) => ({ ...s!, failures: i + 1 }));
      }
      await until("live events", () => a.messages.length === 8 && b.messages.length === 8);
      const expected = [
        "created:network.AddressSpecController",
        "created:time.SyncController",
        "bootstrapped",
        "updated:2",
        "updated:3",
        "updated:4",
        "updated:5",
        "updated:6",
      ];
      deepEqual(a.messages.map(show), expected);
      deepEqual(b.raw.map(hex), a.raw.map(hex), "the same bytes");
      equal(machinedStreams(), 1, "machined serves one Watch for both");
      equal(store.watchCount, 1);

      // A late joiner: the contents as they are now (version 6), then live events.
      const late = watch(connect());
      await until("late joiner bootstrapped", () => late.messages.length === 3);
      deepEqual(late.messages.map(show), expected.slice(0, 3));
      const sync = late.messages[1].event;
      ok(sync.case === "created" && sync.value.metadata?.version === 6n);
      store.destroy({
        type: "ControllerStatus",
        namespace: "runtime",
        id: "network.AddressSpecController",
      }, "test");
      await until("destroyed seen", () => late.messages.length === 4 && a.messages.length === 9);
      equal(show(late.messages[3]), "destroyed:network.AddressSpecController");
      deepEqual(a.raw.at(-1), late.raw.at(-1));
      equal(machinedStreams(), 1);
      const m = await edgeMetrics();
      equal(m.machined_edge_watch_shares, 1);
      equal(m.machined_edge_watch_clients, 3);

      for (const w of [a, b, late]) w.cancel();
      await Promise.all([a.done, b.done, late.done]);
      // The last client gone, the shared call is cancelled and machined lets go.
      await until("machined's watch released", () => machinedStreams() === 0);
      await until("store watch released", () => store.watchCount === 0);
      const after = await edgeMetrics();
      equal(after.machined_edge_watch_shares, 0);
      equal(after.machined_edge_watch_clients, 0);
      equal(after.machined_edge_watch_upstream_calls_total, 1);
    });
  },
});

Deno.test({
  name:
    "edge fan-out: a client that stops reading overflows alone, then gets the contents again; the client beside it sees every event",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, connect, edgeMetrics }) => {
      const slow = watch(connect());
      const fast = watch(connect());
      await until("bootstrapped", () => slow.messages.length === 3 && fast.messages.length === 3);
      slow.pause();
      const filler = "x".repeat(1000);
      const N = 6000;
      for (let i = 0; i < N; i++) {
        await store.modify(PTR, "test", (s) => ({ ...s!, lastError: `${i} ${filler}` }));
        if (i % 50 === 49) {
          await until("fast stream keeps up", () => fast.messages.length >= i - 100);
        }
      }
      await until("fast stream saw every event", () => fast.messages.length === 3 + N);
      const versions = fast.messages.slice(3).map((m) =>
        m.event.case === "updated" ? Number(m.event.value.resource?.metadata?.version) : -1
      );
      deepEqual(versions, Array.from({ length: N }, (_, i) => i + 2), "every event, in order");
      ok(slow.messages.length < 3 + N, "the slow stream is held back");
      slow.resume();
      await until("slow stream told", () => slow.messages.some((m) => m.event.case === "overflow"));
      await until(
        "slow stream re-bootstrapped",
        () => slow.messages.at(-1)?.event.case === "bootstrapped",
      );
      const at = slow.messages.findIndex((m) => m.event.case === "overflow");
      const overflow = slow.messages[at].event;
      ok(overflow.case === "overflow" && overflow.value.dropped > 4096n, "past 4096 behind");
      deepEqual(slow.messages.slice(at + 1).map(show), [
        "created:network.AddressSpecController",
        "created:time.SyncController",
        "bootstrapped",
      ]);
      const resent = slow.messages[at + 2].event;
      ok(resent.case === "created" && resent.value.metadata?.version === BigInt(N + 1));
      const before = slow.messages.slice(3, at).map(show);
      deepEqual(before, before.map((_, i) => `updated:${i + 2}`), "what came before, in order");
      await store.modify(PTR, "test", (s) => ({ ...s!, lastError: "after" }));
      await until("slow stream live again", () => slow.messages.at(-1)?.event.case === "updated");
      equal(machinedStreams(), 1, "machined served one Watch, read at once by the edge");
      equal((await edgeMetrics()).machined_edge_watch_overflows_total, 1);
      slow.cancel();
      fast.cancel();
      await Promise.all([slow.done, fast.done]);
      await until("released", () => machinedStreams() === 0);
    });
  },
});

Deno.test({
  name:
    "edge fan-out: a reader and an admin get separately redacted streams (one shared call per role)",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, connect }) => {
      const ptr = { type: "ServiceSpec" as const, namespace: "runtime", id: "web" };
      store.create({
        ...ptr,
        owner: "test",
        spec: { ...fakeServiceSpec(["/bin/web"]), env: { API_TOKEN: "s3cret" } },
      });
      const req = { type: "ServiceSpec", namespace: "runtime" };
      const reader = watch(connect("os:reader"), req);
      const reader2 = watch(connect("os:reader"), req);
      const admin = watch(connect("os:admin"), req);
      const all = [reader, reader2, admin];
      await until("bootstrapped", () => all.every((w) => w.messages.length === 2));
      await store.modify(ptr, "test", (s) => ({ ...s!, env: { API_TOKEN: "n3w" } }));
      await until("update seen", () => all.every((w) => w.messages.length === 3));
      const env = (m: WatchResponse) => {
        const r = m.event.case === "updated"
          ? m.event.value.resource
          : m.event.case === "created"
          ? m.event.value
          : undefined;
        return r?.spec.case === "serviceSpec" ? r.spec.value.env.API_TOKEN : undefined;
      };
      deepEqual(reader.messages.map(env), [REDACTED, undefined, REDACTED]);
      deepEqual(admin.messages.map(env), ["s3cret", undefined, "n3w"]);
      const secrets = (w: typeof reader) =>
        w.raw.some((b) => new TextDecoder().decode(b).match(/s3cret|n3w/));
      ok(!secrets(reader) && !secrets(reader2), "no secret byte reaches a reader");
      notEqual(hex(admin.raw[0]), hex(reader.raw[0]));
      equal(machinedStreams(), 2, "one shared call per role");
      for (const w of all) w.cancel();
      await Promise.all(all.map((w) => w.done));
      await until("released", () => machinedStreams() === 0);
    });
  },
});

Deno.test({
  name:
    "edge fan-out: machined's errors reach every client with its code; grpc-timeout ends a stream with DEADLINE_EXCEEDED",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, connect }) => {
      const c = connect();
      const unknown = [watch(c, { type: "nope" }), watch(c, { type: "nope" })];
      for (const u of unknown) {
        const t = await withTimeout(u.done, 5000, "unknown type");
        equal(t["grpc-status"], "3");
        ok(decodeURIComponent(t["grpc-message"] ?? "").includes("MachineStatus"));
      }
      // An undecodable request: machined refuses it on the shared call, in its own words.
      const garbage = c.call(WATCH_PATH, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]), () => {});
      const g = await withTimeout(garbage.done, 5000, "undecodable body");
      equal(g["grpc-status"], "3");
      ok(decodeURIComponent(g["grpc-message"] ?? "").startsWith("parse binary"));
      const bad = watch(c, { type: "controllers" }, { "grpc-timeout": "soon" });
      const b = await withTimeout(bad.done, 5000, "bad timeout");
      equal(b["grpc-status"], "3");

      const lasting = watch(c);
      const timed = watch(c, { type: "controllers" }, { "grpc-timeout": "300m" });
      const d = await withTimeout(timed.done, 5000, "deadline");
      equal(d["grpc-status"], "4");
      equal(decodeURIComponent(d["grpc-message"] ?? ""), "the operation timed out");
      equal(timed.messages.at(-1)?.event.case, "bootstrapped");
      // The other client of the share reads on.
      await store.modify(PTR, "test", (s) => ({ ...s!, failures: 9 }));
      await until("still live", () => lasting.messages.at(-1)?.event.case === "updated");
      equal(machinedStreams(), 1);
      lasting.cancel();
      await lasting.done;
      await until("released", () => machinedStreams() === 0 && store.watchCount === 0);
    });
  },
});

Deno.test({
  name: "--watch-fanout=machined: every Watch is its own call to machined, as before",
  ignore: !built,
  async fn() {
    await withEdge(async ({ machinedStreams, connect }) => {
      const calls = [watch(connect()), watch(connect())];
      await until("bootstrapped", () => calls.every((w) => w.messages.length === 3));
      equal(machinedStreams(), 2);
      for (const w of calls) w.cancel();
      await Promise.all(calls.map((w) => w.done));
      await until("released", () => machinedStreams() === 0);
    }, { watchFanout: "machined" });
  },
});

Deno.test({
  name:
    "edge fan-out: machinectl's client (Connect's gRPC transport, as `get --watch` uses it) is served from the shared call",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, client }) => {
      const abort = new AbortController();
      const logs: string[][] = [[], []];
      const both = logs.map(async (mine) => {
        try {
          const c = client();
          for await (const m of c.api.watch({ type: "controllers" }, { signal: abort.signal })) {
            mine.push(show(m));
          }
        } catch (e) {
          if (!abort.signal.aborted) throw e;
        }
      });
      await until("both bootstrapped", () => logs.every((l) => l.length === 3));
      await store.modify(PTR, "test", (s) => ({ ...s!, failures: 1 }));
      await until("both saw the update", () => logs.every((l) => l.length === 4));
      for (const l of logs) {
        deepEqual(l, [
          "created:network.AddressSpecController",
          "created:time.SyncController",
          "bootstrapped",
          "updated:2",
        ]);
      }
      equal(machinedStreams(), 1);
      abort.abort();
      await Promise.all(both);
      await until("released", () => machinedStreams() === 0);
    });
  },
});

Deno.test({
  name:
    "edge fan-out: machined restarting ends every client with UNAVAILABLE; a new Watch then opens a new shared call",
  ignore: !built,
  async fn() {
    await withEdge(async ({ store, machinedStreams, connect, restartMachined, edgeMetrics }) => {
      const calls = [watch(connect()), watch(connect())];
      await until("bootstrapped", () => calls.every((w) => w.messages.length === 3));
      await restartMachined();
      for (const w of calls) {
        const t = await withTimeout(w.done, 5000, "ended");
        equal(t["grpc-status"], "14");
      }
      const again = watch(connect());
      await until("bootstrapped again", () => again.messages.length === 3);
      await store.modify(PTR, "test", (s) => ({ ...s!, failures: 1 }));
      await until("live again", () => again.messages.length === 4);
      equal(machinedStreams(), 1);
      const m = await edgeMetrics();
      equal(m.machined_edge_watch_shares, 1);
      equal(m.machined_edge_watch_clients, 1);
      equal(m.machined_edge_watch_upstream_calls_total, 2);
      again.cancel();
      await again.done;
      await until("released", () => machinedStreams() === 0);
    });
  },
});
