/**
 * Watch on machined's internal socket, as apid (or the edge) calls it: the
 * direct route (watch_route.ts) over the shared fan-out. The slow-consumer
 * test is end to end: its client stops reading, HTTP/2 flow control and the
 * send gate hold the stream back, its cursor falls behind, and it alone gets
 * the overflow while a stream on another connection sees every event.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  WatchRequestSchema,
  type WatchResponse,
  WatchResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import { EventBus } from "../../events/mod.ts";
import { MetricsRegistry } from "../../metrics/mod.ts";
import type { MachineStore } from "../../resources/mod.ts";
import { createTestPki, RecordingActions, seededStore, withTimeout } from "../testing.ts";
import { createClientConfigIssuer } from "./client_config_issuer.ts";
import { startInternalApiServer } from "./internal_server.ts";
import { connectH2, type H2Client } from "./testing_h2.ts";
import { WATCH_PATH } from "./watch_route.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PTR = { type: "ControllerStatus" as const, namespace: "runtime", id: "time.SyncController" };

async function until(what: string, cond: () => boolean, ms = 20_000): Promise<void> {
  await withTimeout(
    (async () => {
      while (!cond()) await sleep(5);
    })(),
    ms,
    what,
  );
}

async function withServer(
  run: (f: { store: MachineStore; socketPath: string; registry: MetricsRegistry }) => Promise<void>,
): Promise<void> {
  const pki = await createTestPki();
  const store = seededStore();
  const registry = new MetricsRegistry();
  const socketPath = join(pki.dir, "run", "api.sock");
  const server = await startInternalApiServer({
    socketPath,
    registry,
    deps: {
      store,
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
    },
  });
  try {
    await run({ store, socketPath, registry });
  } finally {
    await server.close();
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
  const body = toBinary(WatchRequestSchema, create(WatchRequestSchema, req));
  const call = c.call(
    WATCH_PATH,
    body,
    (b) => messages.push(fromBinary(WatchResponseSchema, b)),
    headers,
  );
  return { ...call, messages };
}

function show(m: WatchResponse): string {
  switch (m.event.case) {
    case "created":
    case "destroyed":
      return `${m.event.case}:${m.event.value.metadata?.id}`;
    case "updated":
      return `updated:${m.event.value.resource?.metadata?.version}`;
    case "overflow":
      return "overflow";
    default:
      return m.event.case ?? "none";
  }
}

Deno.test("Watch on the internal socket: contents, marker, live events in order, for every stream on one subscription; cancel releases it", async () => {
  await withServer(async ({ store, socketPath, registry }) => {
    const c = connectH2(socketPath);
    try {
      const calls = [watch(c), watch(c), watch(c)];
      await until("bootstrapped", () => calls.every((w) => w.messages.length === 3));
      equal(store.watchCount, 1, "three streams, one store subscription");
      for (let i = 0; i < 5; i++) {
        await store.modify(PTR, "test", (s) => ({ ...s!, failures: i + 1 }));
      }
      await until("live events", () => calls.every((w) => w.messages.length === 8));
      for (const w of calls) {
        deepEqual(w.messages.map(show), [
          "created:network.AddressSpecController",
          "created:time.SyncController",
          "bootstrapped",
          "updated:2",
          "updated:3",
          "updated:4",
          "updated:5",
          "updated:6",
        ]);
      }
      ok((await registry.render()).includes('machined_api_streams_open{method="Watch"} 3'));
      for (const w of calls) w.cancel();
      await Promise.all(calls.map((w) => w.done));
      await until("store watch released", () => store.watchCount === 0);
      for (let i = 0; i < 100; i++) {
        if ((await registry.render()).includes('machined_api_streams_open{method="Watch"} 0')) {
          break;
        }
        await sleep(10);
      }
      ok((await registry.render()).includes('machined_api_streams_open{method="Watch"} 0'));
    } finally {
      c.close();
    }
  });
});

Deno.test("a stream whose client stops reading overflows alone; a stream beside it sees every event", async () => {
  await withServer(async ({ store, socketPath }) => {
    const slowConn = connectH2(socketPath);
    const fastConn = connectH2(socketPath);
    try {
      const slow = watch(slowConn);
      const fast = watch(fastConn);
      await until("bootstrapped", () => slow.messages.length === 3 && fast.messages.length === 3);
      slow.pause();
      const filler = "x".repeat(1000);
      const N = 6000;
      for (let i = 0; i < N; i++) {
        await store.modify(PTR, "test", (s) => ({ ...s!, lastError: `${i} ${filler}` }));
        // A fast consumer is one that keeps up: pace the writer to it, never to the slow one.
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
      ok(overflow.case === "overflow" && overflow.value.dropped > 0n);
      deepEqual(slow.messages.slice(at + 1).map(show), [
        "created:network.AddressSpecController",
        "created:time.SyncController",
        "bootstrapped",
      ]);
      const before = slow.messages.slice(3, at).map((m) => show(m));
      deepEqual(before, before.map((_, i) => `updated:${i + 2}`), "what came before, in order");
      await store.modify(PTR, "test", (s) => ({ ...s!, lastError: "after" }));
      await until("slow stream live again", () => slow.messages.at(-1)?.event.case === "updated");
      equal(store.watchCount, 1);
      slow.cancel();
      fast.cancel();
      await Promise.all([slow.done, fast.done]);
      await until("released", () => store.watchCount === 0);
    } finally {
      slowConn.close();
      fastConn.close();
    }
  });
});

Deno.test("Watch errors (an unknown type, an undecodable body) end the stream with the gRPC status; a deadline ends it with DEADLINE_EXCEEDED", async () => {
  await withServer(async ({ store, socketPath }) => {
    const c = connectH2(socketPath);
    try {
      const unknown = watch(c, { type: "nope" });
      const t = await withTimeout(unknown.done, 5000, "unknown type");
      equal(t["grpc-status"], "3");
      ok(decodeURIComponent(t["grpc-message"] ?? "").includes("MachineStatus"));
      // An undecodable request body is the caller's mistake, as on Connect's routes.
      const garbage = c.call(WATCH_PATH, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]), () => {});
      const g = await withTimeout(garbage.done, 5000, "undecodable body");
      equal(g["grpc-status"], "3");
      ok(decodeURIComponent(g["grpc-message"] ?? "").startsWith("parse binary"));
      const timed = watch(c, { type: "controllers" }, { "grpc-timeout": "300m" });
      const d = await withTimeout(timed.done, 5000, "deadline");
      equal(d["grpc-status"], "4");
      equal(timed.messages.at(-1)?.event.case, "bootstrapped");
      await until("released", () => store.watchCount === 0);
    } finally {
      c.close();
    }
  });
});

Deno.test("a Watch without forwarded identity, or from a maintenance caller, is left to the Connect handler, which refuses it", async () => {
  await withServer(async ({ store, socketPath }) => {
    const anonymous = connectH2(socketPath, null);
    const maintenance = connectH2(socketPath, {
      role: "os:reader",
      name: "",
      serialNumber: "",
      maintenance: true,
    });
    try {
      const a = await withTimeout(watch(anonymous).done, 5000, "anonymous");
      equal(a["grpc-status"], "16", "Unauthenticated");
      const m = await withTimeout(watch(maintenance).done, 5000, "maintenance");
      equal(m["grpc-status"], "7", "PermissionDenied: not in maintenance mode");
      equal(store.watchCount, 0);
    } finally {
      anonymous.close();
      maintenance.close();
    }
  });
});
