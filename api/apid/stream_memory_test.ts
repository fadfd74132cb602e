/**
 * apid's memory with clients that open server streams and never read them:
 * 200 Watch streams on two connections that never grant flow-control window,
 * while machined's store commits 1000 updates. apid is a real process (as on a
 * node), so its RSS is read from /proc. Every stream's buffer is bounded
 * (api/apid/stream_buffer.ts), so the growth stays under STREAM_MEMORY_BOUND.
 */
import { deepEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { WatchRequestSchema } from "../gen/machined/v1/machine_pb.ts";
import { createClientConfigIssuer, startInternalApiServer } from "../server/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { createTestPki, RecordingActions, seededStore, withTimeout } from "../testing.ts";
import { spawnApid } from "./testing.ts";
import { APID_DEFAULTS } from "./apid_options.ts";
import { connectRawH2 } from "./testdata/raw_h2_client.ts";

/**
 * What 200 unread streams through 1000 events may add to apid's peak RSS over
 * its RSS after a warm-up with the same streams (docs/api.md, "Limits").
 * Measured on the 2-core dev machine: +38 to +101 MiB, mostly garbage from
 * re-encoding 200k messages, freed once the streams overflow. From a cold
 * start (no warm-up): peak 275 MiB (+182 MiB); before the bound 922 MiB
 * (+828 MiB), growing with every event and never released.
 */
const STREAM_MEMORY_BOUND = 160 * 1024 * 1024;
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

Deno.test("apid: 200 unread Watch streams through 1000 events stay under the memory bound", async () => {
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
  const apid = spawnApid({
    apid: { ...APID_DEFAULTS, pkiDir: pki.dir, socketPath, hostname: "127.0.0.1", port: 0 },
  });
  try {
    const port = await apid.port();
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
      await until("every stream answered", 20_000, () => internal.watchStreams === STREAMS);
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
    await commit(EVENTS);
    // Nothing is read, so every stream stalls, overflows and is closed, releasing machined's watch.
    await until("every stream closed", 30_000, () => store.watchCount === 0);
    await until(
      "every stream ended",
      10_000,
      () => streams().every((s) => s.ended),
    );
    await sleep(500);
    clearInterval(sampler);
    peak = Math.max(peak, rssBytes(apid.pid));
    const growth = peak - base;
    console.log(
      `apid RSS: cold ${(cold / 2 ** 20).toFixed(1)} MiB, base ${
        (base / 2 ** 20).toFixed(1)
      } MiB, peak ${(peak / 2 ** 20).toFixed(1)} MiB ` +
        `(+${(growth / 2 ** 20).toFixed(1)} MiB; ${
          (withStreams / 2 ** 20).toFixed(1)
        } MiB once open) ` +
        `with ${STREAMS} unread streams, ${EVENTS} events; ` +
        `store watches left: ${store.watchCount}; streams ended: ${
          streams().filter((s) => s.ended).length
        }`,
    );
    raws.forEach((r) => r.close());
    ok(growth < STREAM_MEMORY_BOUND, `apid grew by ${growth} bytes`);
    deepEqual(raws.map((r) => r.goaway), [undefined, undefined]);
  } finally {
    await apid.stop();
    await internal.close();
    await Deno.remove(pki.dir, { recursive: true });
  }
});
