/**
 * apid's memory with clients that open server streams and never read them:
 * 200 Watch streams on two connections that never grant flow-control window,
 * while machined's store commits 1000 updates. apid is machined-edge, a real
 * process (as on a node), so its RSS is read from /proc. The edge forwards
 * frames under HTTP/2 flow control both ways (it holds at most a window per
 * stream, and machined's own per-stream buffer overflows explicitly), so the
 * growth stays under STREAM_MEMORY_BOUND.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { WatchRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { createClientConfigIssuer, startInternalApiServer } from "../server/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createTestPki, RecordingActions, seededStore, withTimeout } from "../testing.ts";
import { spawnEdge } from "./testing.ts";
import { connectRawH2 } from "./testdata/raw_h2_client.ts";

/**
 * What 200 unread streams through 1000 events may add to apid's peak RSS over
 * its RSS after a warm-up with the same streams (docs/api.md, "Limits").
 * The Deno apid needed 160 MiB (+38 to +101 MiB measured; 922 MiB before it
 * had a bound); machined-edge holds at most a window per stream.
 */
const STREAM_MEMORY_BOUND = 32 * 1024 * 1024;
const STREAMS = 200;
const EVENTS = Number(Deno.env.get("EVENTS") ?? 1000);

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return m ? Number(m[1]) * 1024 : NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ms: number, cond: () => boolean): Promise<void> {
  await withTimeout(
    (async () => {
      while (!cond()) await sleep(20);
    })(),
    ms,
    what,
  );
}

for (const watchFanout of ["edge", "machined"] as const) {
  Deno.test(`apid (--watch-fanout=${watchFanout}): 200 unread Watch streams through 1000 events stay under the memory bound`, async () => {
    await unreadStreams(watchFanout);
  });
}

/**
 * With the fan-out in the edge, machined serves one Watch for the 200 and the
 * edge holds each client's position in one shared log; with it in machined,
 * each stream is forwarded and held back by flow control.
 */
async function unreadStreams(watchFanout: "edge" | "machined"): Promise<void> {
  const pki = await createTestPki();
  const store = seededStore();
  const socketPath = join(pki.dir, "run", "api.sock");
  const internal = await startInternalApiServer({
    socketPath,
    deps: {
      store,
      actions: new RecordingActions(),
      events: new EventBus(),
      clientConfigs: createClientConfigIssuer(pki.ca, () => ["127.0.0.1"]),
    },
  });
  const apid = await spawnEdge({
    pkiDir: pki.dir,
    socketPath,
    hostname: "127.0.0.1",
    port: 0,
    limits: { watchFanout },
  });
  try {
    const port = apid.port;
    const cold = rssBytes(apid.pid);

    const reader = pki.clients["os:reader"];
    const request = toBinary(
      WatchRequestSchema,
      create(WatchRequestSchema, { type: "ControllerStatus", namespace: "runtime" }),
    );
    /** 200 streams on two connections (apid allows 100 per connection by default). */
    const openUnread = async () => {
      const raws = await Promise.all([0, 1].map(() =>
        connectRawH2({
          host: "127.0.0.1",
          port,
          ca: pki.ca.certPem,
          cert: reader.certPem,
          key: reader.keyPem,
        })
      ));
      for (let i = 0; i < STREAMS; i++) {
        raws[i % 2].open("/machined.v1.MachineService/Watch", request);
      }
      const streams = () => raws.flatMap((r) => [...r.streams.values()]);
      // Answered: the response head (machined's, or the edge's own once it has the request).
      const machinedStreams = watchFanout === "edge" ? 1 : STREAMS;
      await until(
        "every stream answered",
        20_000,
        () =>
          streams().length === STREAMS && streams().every((s) => s.headerBlocks > 0) &&
          internal.watchStreams === machinedStreams,
      );
      return raws;
    };
    const ptr = {
      type: "ControllerStatus" as const,
      namespace: "runtime",
      id: "time.SyncController",
    };
    const filler = "x".repeat(1024);
    const commit = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await store.modify(ptr, "test", (s) => ({ ...s!, lastError: `${i} ${filler}` }));
        if (i % 20 === 19) await sleep(1);
      }
    };
    // Warm-up (compiled code, heap sized): the same streams, a few events, then the clients leave.
    const warm = await openUnread();
    await commit(50);
    warm.forEach((r) => r.close());
    await until("warm-up streams released", 20_000, () => store.watchCount === 0);
    await sleep(1000);
    const base = rssBytes(apid.pid);

    const raws = await openUnread();
    const streams = () => raws.flatMap((r) => [...r.streams.values()]);
    const withStreams = rssBytes(apid.pid);
    let peak = base;
    const sampler = setInterval(() => peak = Math.max(peak, rssBytes(apid.pid)), 50);
    try {
      await commit(EVENTS);
      // Nothing is read: every stream's window fills and apid stops reading it from machined,
      // whose bounded watch queues (4096 events, then overflow) hold the rest.
      await sleep(2000);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssBytes(apid.pid));
    const held = store.watchCount;
    const growth = peak - base;
    console.log(
      `apid RSS: cold ${(cold / 2 ** 20).toFixed(1)} MiB, base ${
        (base / 2 ** 20).toFixed(1)
      } MiB, peak ${(peak / 2 ** 20).toFixed(1)} MiB ` +
        `(+${(growth / 2 ** 20).toFixed(1)} MiB; ${
          (withStreams / 2 ** 20).toFixed(1)
        } MiB once open) ` +
        `with ${STREAMS} unread streams (fan-out: ${watchFanout}), ${EVENTS} events; ` +
        `store watches held: ${held}; streams ended: ${streams().filter((s) => s.ended).length}`,
    );
    ok(growth < STREAM_MEMORY_BOUND, `apid grew by ${growth} bytes`);
    deepEqual(raws.map((r) => r.goaway), [undefined, undefined]);
    // Held back, not dropped: the streams are open, on the one store subscription they share.
    equal(streams().filter((s) => s.ended).length, 0);
    equal(held, 1);
    raws.forEach((r) => r.close());
    // The clients gone, machined's watches are released.
    await until("every store watch released", 20_000, () => store.watchCount === 0);
  } finally {
    await apid.close();
    await internal.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
}
