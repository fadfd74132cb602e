/**
 * API benchmark, with the real process split: machined's side (internal
 * server over a store) and apid (machined-edge) each run as their own process; this process
 * is only the client. Prints one JSON object:
 * - idle RSS of both after start;
 * - unary Get over mTLS on one kept-alive connection: p50/p99 latency
 *   (sequential) and requests/s (16 in flight), with the CPU time of each
 *   process; then the same 16 in flight from a lean HTTP/2 client
 *   (`unaryGetLean`), which costs less than the Connect client;
 * - 1000 concurrent Watch streams (10 connections × 100): RSS of both, and
 *   event delivery latency p99 from the store commit to the client.
 *
 * - start time: spawn to the ready line.
 *
 * machined-edge is built by `deno task native` (native-ops/edge/). The Deno
 * apid it replaced was measured side by side with it: docs/decisions.md.
 *
 * machined's side runs with the V8 flags the image gives it (layout/v8_flags.ts);
 * `BENCH_V8_FLAGS=none` (or a comma-separated list) sets them instead.
 *
 * `API_BENCH_PROF=DIR` writes a CPU profile of machined's side into DIR.
 *
 * Usage: deno run -A bench/api_bench.ts   (about a minute)
 */
import http2 from "node:http2";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetRequestSchema, MachineService } from "../api/gen/machined/v1/machine_pb.ts";
import { h2Client } from "../api/server/testing_h2.ts";
import { createMachineClient, type MachineClient } from "../api/client/mod.ts";
import { createTestPki, type TestPki } from "../api/testing.ts";
import { APID_DEFAULTS, edgeProcessSpec } from "../api/edge/mod.ts";
import { loadOrCreateNodePki } from "../pki/mod.ts";
import { MACHINED_V8_FLAGS, v8FlagsArgs } from "../layout/mod.ts";
import { commitTicks, startBenchServer } from "./machined_side.ts";
import { cpuMs, lineReader, pct, rssKiB } from "./proc.ts";

const WATCHERS = 1000;
const CONNECTIONS = 10;

/** Child mode: machined's side. Reads `tick <n> <ms>` lines on stdin, commits n updates. */
async function machinedSide(pkiDir: string): Promise<void> {
  const pki = await loadOrCreateNodePki(pkiDir, {
    hostnames: ["localhost"],
    addresses: ["127.0.0.1"],
  });
  const { store, server } = await startBenchServer(join(pkiDir, "run", "api.sock"), pki.ca);
  console.log("ready");
  for await (const line of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    const m = /tick (\d+) (\d+)/.exec(line);
    if (!m) continue;
    await commitTicks(store, Number(m[1]), Number(m[2]));
    console.log("ticked");
  }
  await server.close();
}

const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/**
 * machined's V8 flags: those the image runs it with (layout/v8_flags.ts), or
 * BENCH_V8_FLAGS (comma-separated; "none" for V8's defaults), to compare sets.
 */
function machinedV8Flags(): readonly string[] {
  const env = Deno.env.get("BENCH_V8_FLAGS");
  if (env === undefined) return MACHINED_V8_FLAGS;
  return env === "none" ? [] : env.split(",").filter(Boolean);
}

/** `API_BENCH_PROF=DIR` writes a CPU profile of machined's side there. */
function profArgs(): string[] {
  const dir = Deno.env.get("API_BENCH_PROF");
  return dir ? [`--cpu-prof-dir=${dir}`] : [];
}

/**
 * Unary Gets for 5 s, 16 in flight on one mTLS connection, from a lean HTTP/2
 * client (api/server/testing_h2.ts): requests/s, latency p50/p99, and the CPU
 * time of `pids` ([machined, edge]) and this process over the phase.
 */
async function leanGets(endpoint: string, pki: TestPki, pids: [number, number]) {
  const creds = pki.clients["os:reader"];
  const session = http2.connect(`https://${endpoint}`, {
    ca: pki.ca.certPem,
    cert: creds.certPem,
    key: creds.keyPem,
  });
  const c = h2Client(session);
  const body = toBinary(GetRequestSchema, create(GetRequestSchema, { type: "ms", id: "machine" }));
  const path = `/${MachineService.typeName}/Get`;
  const get = async () => {
    const t = await c.call(path, body, () => {}).done;
    if (t["grpc-status"] !== "0") throw new Error(`Get failed: ${JSON.stringify(t)}`);
  };
  for (let i = 0; i < 300; i++) await get();
  const cpu = () => [cpuMs(pids[0]), cpuMs(pids[1]), cpuMs("self")];
  const cpu0 = cpu();
  const lat: number[] = [];
  const started = performance.now();
  const until = started + 5000;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (performance.now() < until) {
      const t = performance.now();
      await get();
      lat.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const [m, e, self] = cpu().map((v, i) => v - cpu0[i]);
  c.close();
  lat.sort((a, b) => a - b);
  return {
    requestsPerSecond: Math.round(lat.length / seconds),
    p50Ms: round(pct(lat, 0.5)),
    p99Ms: round(pct(lat, 0.99)),
    cpuMs: { machined: m, apid: e, client: self },
  };
}

async function main(): Promise<void> {
  const pki: TestPki = await createTestPki();
  const v8 = { machined: machinedV8Flags() };
  const machined = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...v8FlagsArgs(v8.machined),
      ...profArgs(),
      new URL(import.meta.url).pathname,
    ]
      .concat(["--machined", pki.dir]),
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const fromMachined = await lineReader(machined.stdout, "child");
  await fromMachined();
  const options = {
    ...APID_DEFAULTS,
    pkiDir: pki.dir,
    socketPath: join(pki.dir, "run", "api.sock"),
    hostname: "127.0.0.1",
    port: 0,
    maxConcurrentStreams: 256,
  };
  const spec = edgeProcessSpec({ apid: options });
  const spawned = performance.now();
  const apid = new Deno.Command(spec.argv[0], {
    args: spec.argv.slice(1),
    env: spec.env,
    clearEnv: true,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const ready = JSON.parse(await (await lineReader(apid.stdout, "child"))()) as { port: number };
  const startMs = performance.now() - spawned;
  const endpoint = `127.0.0.1:${ready.port}`;
  const client = (): MachineClient =>
    createMachineClient({
      endpoint,
      caPem: pki.ca.certPem,
      certPem: pki.clients["os:reader"].certPem,
      keyPem: pki.clients["os:reader"].keyPem,
    });

  await new Promise((r) => setTimeout(r, 1000));
  const idle = { machinedKiB: rssKiB(machined.pid), apidKiB: rssKiB(apid.pid) };

  // Unary Get: latency (sequential) then throughput (16 in flight), one connection.
  const c = client();
  const get = () => c.api.get({ type: "ms", id: "machine" });
  for (let i = 0; i < 300; i++) await get();
  const lat: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const t = performance.now();
    await get();
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  let done = 0;
  const until = performance.now() + 5000;
  const started = performance.now();
  const cpu0 = { machined: cpuMs(machined.pid), apid: cpuMs(apid.pid), client: cpuMs("self") };
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (performance.now() < until) {
      await get();
      done++;
    }
  }));
  const rps = done / ((performance.now() - started) / 1000);
  // CPU time of each process over the throughput phase: who the bottleneck is.
  const getCpuMs = {
    machined: cpuMs(machined.pid) - cpu0.machined,
    apid: cpuMs(apid.pid) - cpu0.apid,
    client: cpuMs("self") - cpu0.client,
  };
  c.close();
  const lean = await leanGets(endpoint, pki, [machined.pid, apid.pid]);
  // machined after the Gets: the Watch streams' growth is measured from here (the Get
  // phase's heap is not theirs).
  await new Promise((r) => setTimeout(r, 500));
  const afterGets = { machinedKiB: rssKiB(machined.pid), apidKiB: rssKiB(apid.pid) };

  // 1000 concurrent watches.
  const clients = Array.from({ length: CONNECTIONS }, client);
  const ac = new AbortController();
  const latencies: number[] = [];
  let bootstrapped = 0;
  const allBootstrapped = Promise.withResolvers<void>();
  const watchers = Array.from({ length: WATCHERS }, async (_, i) => {
    const cl = clients[i % CONNECTIONS];
    try {
      for await (const m of cl.api.watch({ type: "controllers" }, { signal: ac.signal })) {
        if (m.event.case === "bootstrapped") {
          if (++bootstrapped === WATCHERS) allBootstrapped.resolve();
        } else if (m.event.case === "updated") {
          const spec = m.event.value.resource?.spec;
          if (spec?.case === "controllerStatus") {
            latencies.push(
              performance.timeOrigin + performance.now() - Number(spec.value.lastError),
            );
          }
        }
      }
    } catch {
      // aborted at the end
    }
  });
  const openStart = performance.now();
  await allBootstrapped.promise;
  const openMs = performance.now() - openStart;
  await new Promise((r) => setTimeout(r, 500));
  const watching = { machinedKiB: rssKiB(machined.pid), apidKiB: rssKiB(apid.pid) };
  const watchCpu0 = { machined: cpuMs(machined.pid), apid: cpuMs(apid.pid), client: cpuMs("self") };
  const TICKS = 20;
  const tickMs = Number(Deno.env.get("API_BENCH_TICK_MS") ?? 100);
  const w = machined.stdin.getWriter();
  await w.write(new TextEncoder().encode(`tick ${TICKS} ${tickMs}\n`));
  while ((await fromMachined()) !== "ticked");
  const want = TICKS * WATCHERS;
  const deadline = performance.now() + 10_000;
  while (latencies.length < want && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const watchCpuMs = {
    machined: cpuMs(machined.pid) - watchCpu0.machined,
    apid: cpuMs(apid.pid) - watchCpu0.apid,
    client: cpuMs("self") - watchCpu0.client,
  };
  latencies.sort((a, b) => a - b);
  ac.abort();
  await Promise.allSettled(watchers);
  for (const cl of clients) cl.close();

  console.log(JSON.stringify({
    bench: "api",
    edge: "machined-edge",
    startMs: Math.round(startMs),
    idleRss: idle,
    unaryGet: {
      p50Ms: round(pct(lat, 0.5)),
      p99Ms: round(pct(lat, 0.99)),
      requestsPerSecond: Math.round(rps),
      inFlight: 16,
      cpuMs: getCpuMs,
    },
    // The same 16 in flight from a lean HTTP/2 client (no Connect, no decoding): the
    // node's own capacity when the Connect client is the limit.
    unaryGetLean: lean,
    afterGetsRss: afterGets,
    watch: {
      streams: WATCHERS,
      connections: CONNECTIONS,
      openAllMs: Math.round(openMs),
      rss: watching,
      machinedGrowthKiB: watching.machinedKiB - afterGets.machinedKiB,
      cpuMs: watchCpuMs,
      events: TICKS,
      eventSpacingMs: tickMs,
      delivered: latencies.length,
      expected: want,
      deliveryP50Ms: round(pct(latencies, 0.5)),
      deliveryP99Ms: round(pct(latencies, 0.99)),
    },
  }));

  await w.close();
  apid.kill("SIGTERM");
  await apid.status;
  await machined.status;
  await Deno.remove(pki.dir, { recursive: true });
}

if (Deno.args[0] === "--machined") await machinedSide(Deno.args[1]);
else await main();
