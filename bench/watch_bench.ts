/**
 * Watch fan-out in machined, without apid: the bench connects to machined's
 * internal server on its Unix socket (gRPC over cleartext HTTP/2, the identity
 * in headers as apid would forward it), so the figures are machined's alone
 * whatever the edge in front of it. machined's side runs in its own process
 * (`--machined`), which reports its RSS and V8 heap (after a full GC) on
 * request. For each N: open N Watch streams on ControllerStatus (100 per
 * connection), wait until every stream is bootstrapped, measure machined,
 * commit 20 updates 100 ms apart (10 events/s) and take the delivery latency
 * from the commit to the client; then close the streams and check that
 * machined released its store watches. Prints one JSON object per line.
 *
 * Usage: deno run -A bench/watch_bench.ts [N ...]   (default 100 1000; about 30 s)
 */
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { WatchRequestSchema, WatchResponseSchema } from "../api/gen/machined/v1/machine_pb.ts";
import { connectH2 } from "../api/server/testing_h2.ts";
import { WATCH_PATH } from "../api/server/mod.ts";
import { createTestPki } from "../api/testing.ts";
import type { Figure } from "./runtime_bench.ts";
import { commitTicks, startBenchServer } from "./machined_side.ts";
import { cpuMs, lineReader, mib, pct, rssKiB } from "./proc.ts";

const STREAMS_PER_CONNECTION = 100;
const TICKS = 20;
const TICK_MS = Number(Deno.env.get("WATCH_BENCH_TICK_MS") ?? 100);

/** Child mode: machined's side. Answers `mem` and `tick <n> <ms>` lines on stdin. */
async function machinedSide(dir: string): Promise<void> {
  const pki = await createTestPki();
  const { store, server } = await startBenchServer(join(dir, "api.sock"), pki.ca);
  console.log("ready");
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    for (const line of chunk.split("\n")) {
      const tick = /tick (\d+) (\d+)/.exec(line);
      if (tick) {
        await commitTicks(store, Number(tick[1]), Number(tick[2]));
        console.log("ticked");
      } else if (line === "mem") {
        gc?.();
        const m = Deno.memoryUsage();
        console.log(JSON.stringify({
          rssKiB: rssKiB(Deno.pid),
          heapUsedKiB: Math.round(m.heapUsed / 1024),
          externalKiB: Math.round(m.external / 1024),
          storeWatches: store.watchCount,
          cpuMs: cpuMs("self"),
        }));
      }
    }
  }
  await server.close();
  await Deno.remove(pki.dir, { recursive: true });
}

interface Mem {
  rssKiB: number;
  heapUsedKiB: number;
  externalKiB: number;
  storeWatches: number;
  cpuMs: number;
}

const WATCH_REQUEST = toBinary(
  WatchRequestSchema,
  create(WatchRequestSchema, { type: "controllers" }),
);

/** One round with `n` watchers; returns its figures. */
async function round(
  n: number,
  socketPath: string,
  ask: (line: string) => Promise<string>,
): Promise<Figure[]> {
  const mem = async (): Promise<Mem> => JSON.parse(await ask("mem"));
  const before = await mem();
  const conns = Array.from(
    { length: Math.ceil(n / STREAMS_PER_CONNECTION) },
    () => connectH2(socketPath),
  );
  const latencies: number[] = [];
  let bootstrapped = 0;
  const all = Promise.withResolvers<void>();
  const openStart = performance.now();
  const onMessage = (bytes: Uint8Array) => {
    const m = fromBinary(WatchResponseSchema, bytes);
    if (m.event.case === "bootstrapped") {
      if (++bootstrapped === n) all.resolve();
    } else if (m.event.case === "updated") {
      const spec = m.event.value.resource?.spec;
      if (spec?.case === "controllerStatus") {
        latencies.push(performance.timeOrigin + performance.now() - Number(spec.value.lastError));
      }
    }
  };
  const calls = Array.from(
    { length: n },
    (_, i) => conns[i % conns.length].call(WATCH_PATH, WATCH_REQUEST, onMessage),
  );
  await all.promise;
  const openMs = performance.now() - openStart;
  await new Promise((r) => setTimeout(r, 500));
  const watching = await mem();
  const deliveryStart = performance.now();
  const clientCpu = cpuMs("self");
  await ask(`tick ${TICKS} ${TICK_MS}`);
  const want = TICKS * n;
  const deadline = performance.now() + 30_000;
  while (latencies.length < want && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const deliveryMs = performance.now() - deliveryStart;
  const delivered = await mem();
  const clientCpuMs = cpuMs("self") - clientCpu;
  for (const c of calls) c.cancel();
  await Promise.all(calls.map((c) => c.done));
  for (const c of conns) c.close();
  let after = await mem();
  for (let i = 0; i < 100 && after.storeWatches > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    after = await mem();
  }
  latencies.sort((a, b) => a - b);
  const per = (k: number) => +(k / n).toFixed(1);
  return [
    {
      name: `watch${n}.rss.growth`,
      value: mib(watching.rssKiB - before.rssKiB),
      unit: "MiB",
      perStreamKiB: per(watching.rssKiB - before.rssKiB),
      rssMiB: mib(watching.rssKiB),
      baselineRssMiB: mib(before.rssKiB),
    },
    {
      name: `watch${n}.heap.growth`,
      value: mib(watching.heapUsedKiB - before.heapUsedKiB),
      unit: "MiB",
      perStreamKiB: per(watching.heapUsedKiB - before.heapUsedKiB),
      externalGrowthMiB: mib(watching.externalKiB - before.externalKiB),
    },
    {
      name: `watch${n}.delivery.p99`,
      value: +pct(latencies, 0.99).toFixed(1),
      unit: "ms",
      p50: +pct(latencies, 0.5).toFixed(1),
      max: +(latencies.at(-1) ?? NaN).toFixed(1),
      delivered: latencies.length,
      expected: want,
      eventsPerSecond: 1000 / TICK_MS,
      deliveryMs: Math.round(deliveryMs),
      machinedCpuMs: delivered.cpuMs - watching.cpuMs,
      clientCpuMs,
    },
    { name: `watch${n}.open`, value: Math.round(openMs), unit: "ms" },
    {
      name: `watch${n}.released`,
      value: after.storeWatches,
      unit: "store watches left",
      rssAfterMiB: mib(after.rssKiB),
    },
  ];
}

/** Runs the rounds against a fresh machined side; the figures of every round. */
export async function watchBench(ns: number[] = [100, 1000]): Promise<Figure[]> {
  const dir = await Deno.makeTempDir({ prefix: "watch-bench-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      ...(Deno.env.get("WATCH_BENCH_PROF")
        ? [`--cpu-prof-dir=${Deno.env.get("WATCH_BENCH_PROF")}`]
        : []),
      new URL(import.meta.url).pathname,
      "--machined",
      dir,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const read = lineReader(child.stdout, "machined side");
  const w = child.stdin.getWriter();
  const ask = async (line: string) => {
    await w.write(new TextEncoder().encode(line + "\n"));
    return await read();
  };
  try {
    if (await read() !== "ready") throw new Error("machined side did not start");
    await new Promise((r) => setTimeout(r, 500));
    const figures: Figure[] = [];
    for (const n of ns) figures.push(...await round(n, join(dir, "api.sock"), ask));
    return figures;
  } finally {
    await w.close();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  if (Deno.args[0] === "--machined") await machinedSide(Deno.args[1]);
  else {
    const ns = Deno.args.length > 0 ? Deno.args.map(Number) : undefined;
    for (const f of await watchBench(ns)) console.log(JSON.stringify({ suite: "watch", ...f }));
  }
}
