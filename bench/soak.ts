/**
 * The soak (issue 12): a dev-mode node, 1 000 Watch streams on MachineConfig
 * that read every message, and an ApplyConfiguration every 2 s that changes
 * the config (a sysctl's value, so each apply is one MachineConfig update per
 * stream: about 500 events/s delivered in all), for a given duration. Every
 * 5 s it reads the RSS of machined (the dev node) and of the network edge in
 * front of it; the report (bench/soak_report.ts) gives each process's first,
 * peak and last RSS and the least-squares slope after the first minute, which
 * is where a leak like Talos's apid OOM (siderolabs/talos#11046) shows.
 *
 * The edge is the dev node's own apid, machined-edge (`edge: "rust"`; the
 * Deno apid it was first compared with is gone: docs/decisions.md, "The soak").
 * The Watch clients run in this process: lean HTTP/2 over mTLS, 10
 * connections, reading every message's bytes without decoding them
 * (soak_wire.ts), so that the client keeps up on a shared machine; the
 * applies go through the Connect client.
 *
 * `deno task bench --soak [--duration=10m]`, or
 * `deno run -A bench/soak.ts [--duration=10m] [--edge=rust] [--watch-fanout=edge|machined]
 * [--unread=N]` (N more streams whose client never reads); each report is
 * also appended as one JSON line to bench/results/soak.jsonl.
 */
import http2 from "node:http2";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { createMachineClient } from "../api/client/mod.ts";
import { WatchRequestSchema } from "../api/gen/machined/v1/machine_pb.ts";
import { type H2Call, type H2Client, h2Client } from "../api/server/testing_h2.ts";
import { edgeBinaryPath } from "../api/edge/mod.ts";
import { WATCH_PATH } from "../api/server/mod.ts";
import { ApplyMode } from "../api/gen/machined/v1/resources_pb.ts";
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { freePort, waitFor } from "../dev/testing.ts";
import { rssKiB } from "./proc.ts";
import { keptGetter, memDetail, sleep } from "./attack_node.ts";
import { structIntValue, watchKind } from "./soak_wire.ts";
import {
  configWithSeq,
  type DevNodeOptions,
  KNOB,
  loadAverage,
  type SoakChange,
  startDevNode,
} from "./soak_node.ts";
import type { Figure } from "./runtime_bench.ts";
import {
  parseSoakArgs,
  type RssSample,
  type SoakArgs,
  type SoakDelivery,
  soakReport,
} from "./soak_report.ts";

/** Options of {@link runSoak}. */
export interface SoakOptions {
  readonly edge: "rust";
  readonly durationMs: number;
  /** @default 1000 */
  readonly streams?: number;
  /** @default 10 */
  readonly connections?: number;
  /** @default 2000 */
  readonly applyEveryMs?: number;
  /** @default 5000 */
  readonly sampleEveryMs?: number;
  /** The slope is fitted after this. @default 60000 */
  readonly warmupMs?: number;
  /** machined-edge's `--watch-fanout`. @default "edge" */
  readonly watchFanout?: "edge" | "machined";
  /** Streams opened beside the readers whose client never reads (100 per connection). @default 0 */
  readonly unread?: number;
  /** What each apply changes. @default "sysctl" */
  readonly change?: SoakChange;
  /** What the dev node runs with (extra environment, V8 flags): to measure, never production. */
  readonly node?: DevNodeOptions;
  /**
   * When set: wait this long once the node answers, then read machined's and
   * the edge's memory (RSS, Pss, RssAnon, RssFile) and machined's V8 heap
   * before any stream opens, read them again at the end, and read the heap
   * at every sample; the report gains `idle`, `end`, `heapUsedMiB` and
   * `mallocMiB` ([s, glibc heap in use, free but kept, V8 external] from the
   * same scrape) (bench/attack.ts's soak).
   */
  readonly idleSettleMs?: number;
  /**
   * How the memory samples reach /metrics: a fresh TLS connection each time
   * (each one a new connection from the edge to machined), or one connection
   * kept for every sample, as Prometheus keeps its own. @default "fresh"
   */
  readonly sampleConnection?: "fresh" | "kept";
}

/**
 * The environment that makes the dev node start machined-edge with
 * `--watch-fanout=machined`: a wrapper that adds the flag (the dev node takes
 * the binary from `$MACHINED_EDGE_BIN`). Nothing for the default.
 */
async function fanoutEnv(
  dir: string,
  fanout: "edge" | "machined",
): Promise<Record<string, string>> {
  if (fanout === "edge") return {};
  const wrapper = join(dir, "machined-edge-machined-fanout");
  await Deno.writeTextFile(
    wrapper,
    `#!/bin/sh\nexec '${edgeBinaryPath()}' "$@" --watch-fanout=${fanout}\n`,
  );
  await Deno.chmod(wrapper, 0o755);
  return { MACHINED_EDGE_BIN: wrapper };
}

/**
 * The clients: `streams` watches over `sessions` (lean HTTP/2 over mTLS, see
 * soak_wire.ts), each counting and timing the applies it sees.
 */
function watchers(
  sessions: H2Client[],
  streams: number,
  sentAt: Map<number, number>,
) {
  const d = { delivered: 0, overflows: 0, ended: 0, bootstrapped: 0, latencies: [] as number[] };
  const all = Promise.withResolvers<void>();
  let stopping = false;
  const onMessage = (bytes: Uint8Array) => {
    const kind = watchKind(bytes);
    if (kind === "bootstrapped") {
      if (++d.bootstrapped === streams) all.resolve();
    } else if (kind === "overflow") d.overflows++;
    else if (kind === "updated") {
      const t0 = sentAt.get(structIntValue(bytes, KNOB) ?? NaN);
      if (t0 === undefined) return;
      d.delivered++;
      d.latencies.push(performance.now() - t0);
    }
  };
  const calls = Array.from(
    { length: streams },
    (_, i) => sessions[i % sessions.length].call(WATCH_PATH, WATCH_REQUEST, onMessage),
  );
  for (const c of calls) c.done.then(() => stopping || d.ended++);
  return {
    d,
    allBootstrapped: all.promise,
    stop: async () => {
      stopping = true;
      for (const c of calls) c.cancel();
      await Promise.allSettled(calls.map((c) => c.done));
    },
  };
}

const WATCH_REQUEST = toBinary(
  WatchRequestSchema,
  create(WatchRequestSchema, { type: "MachineConfig" }),
);

/** A lean HTTP/2 client over mTLS to the edge (which sets the identity). */
function tlsSession(port: number, creds: { caPem: string; certPem: string; keyPem: string }) {
  return h2Client(http2.connect(`https://127.0.0.1:${port}`, {
    ca: creds.caPem,
    cert: creds.certPem,
    key: creds.keyPem,
  }));
}

/** Runs one soak; resolves to its report (see {@link soakReport}). */
export async function runSoak(o: SoakOptions) {
  const streams = o.streams ?? 1000;
  const applyEveryMs = o.applyEveryMs ?? 2000;
  const sampleEveryMs = o.sampleEveryMs ?? 5000;
  const warmupMs = o.warmupMs ?? 60_000;
  const dir = await Deno.makeTempDir({ prefix: "machined-soak-" });
  const stateDir = join(dir, "state");
  const devPort = freePort();
  const fanout = await fanoutEnv(dir, o.watchFanout ?? "edge");
  const node = await startDevNode(stateDir, devPort, {
    ...o.node,
    env: { ...o.node?.env, ...fanout },
  });
  const sessions: H2Client[] = [];
  let stopSampler = () => {};
  try {
    const port = devPort;
    const edgePid = node.apid;
    const creds = resolveCredentials(await readClientConfig(join(stateDir, "machinectl.yaml")));
    const client = () => createMachineClient({ ...creds, endpoint: `127.0.0.1:${port}` });
    const admin = client();
    await waitFor("the edge answers", 30_000, () => admin.api.version({}).then(() => true));
    const base = await Deno.readTextFile(join(stateDir, "config.yaml"));
    const kept = o.sampleConnection === "kept" ? keptGetter(port, creds) : undefined;
    stopSampler = () => kept?.close();
    const detail = o.idleSettleMs === undefined ? undefined : memDetail(node.dev.pid, edgePid, {
      port,
      creds,
      get: kept?.get,
    });
    const idle = detail && (await sleep(o.idleSettleMs!), await detail.read());
    for (let i = 0; i < (o.connections ?? 10); i++) sessions.push(tlsSession(port, creds));
    const sentAt = new Map<number, number>();
    const w = watchers(sessions, streams, sentAt);
    await w.allBootstrapped;
    const unread: H2Call[] = [];
    for (let i = 0; i < (o.unread ?? 0); i++) {
      if (i % 100 === 0) sessions.push(tlsSession(port, creds));
      const call = sessions.at(-1)!.call(WATCH_PATH, WATCH_REQUEST, () => {});
      call.pause();
      unread.push(call);
    }

    const load0 = await loadAverage();
    const samples: RssSample[] = [];
    const started = performance.now();
    const heapUsed: [number, number][] = [];
    /** [s, malloc in use, malloc free, V8 external] MiB (bench/attack_node.ts's memDetail). */
    const malloc: [number, number, number, number][] = [];
    const sample = () => {
      const tMs = performance.now() - started;
      samples.push({
        tMs,
        rssKiB: { machined: read(node.dev.pid), edge: read(edgePid), client: rssKiB("self") },
      });
      detail?.heapAndMalloc().then((m) => {
        heapUsed.push([Math.round(tMs / 1000), m.heapUsed]);
        malloc.push([Math.round(tMs / 1000), m.inUse, m.free, m.external]);
      });
    };
    sample();
    const sampler = setInterval(sample, sampleEveryMs);
    let applies = 0, applyErrors = 0;
    for (let seq = 1; performance.now() - started < o.durationMs; seq++) {
      const next = started + seq * applyEveryMs;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      sentAt.set(seq, performance.now());
      applies++;
      await admin.api.applyConfiguration({
        configYaml: configWithSeq(base, seq, o.change),
        mode: ApplyMode.NO_REBOOT,
      }, { timeoutMs: 30_000 }).catch(() => applyErrors++);
    }
    await new Promise((r) => setTimeout(r, 3000)); // the last apply's deliveries
    clearInterval(sampler);
    sample();
    const durationMs = performance.now() - started;
    await w.stop();
    for (const c of unread) c.cancel();
    admin.close();
    const delivery: SoakDelivery = {
      streams,
      applies,
      applyErrors,
      delivered: w.d.delivered,
      expected: applies * streams,
      overflows: w.d.overflows,
      streamsEnded: w.d.ended,
      latenciesMs: w.d.latencies,
    };
    const load: [number, number] = [load0, await loadAverage()];
    const extra = detail
      ? { idle, end: await detail.read(), heapUsedMiB: heapUsed, mallocMiB: malloc }
      : {};
    return {
      change: o.change ?? "sysctl",
      ...soakReport({
        edge: o.edge,
        durationMs,
        warmupMs,
        applyEveryMs,
        samples,
        delivery,
        load,
      }),
      ...extra,
    };
  } finally {
    stopSampler();
    for (const c of sessions) c.close();
    try {
      node.dev.kill("SIGTERM");
    } catch { /* already gone */ }
    await node.dev.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** VmRSS, NaN once the process is gone (the report skips it). */
function read(pid: number): number {
  try {
    return rssKiB(pid);
  } catch {
    return NaN;
  }
}

/** Appends `report` to bench/results/soak.jsonl. */
export async function recordSoak(report: unknown): Promise<void> {
  const dir = new URL("./results/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(new URL("soak.jsonl", dir), JSON.stringify(report) + "\n", {
    append: true,
  });
}

/**
 * bench/main.ts's soak suite: one soak per edge in `a`, each recorded in
 * bench/results/soak.jsonl, flattened to the slope, peak and delivery figures.
 */
export async function soakFigures(a: SoakArgs): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const edge of a.edges) {
    const r = await runSoak({ edge, durationMs: a.durationMs, streams: a.streams });
    await recordSoak(r);
    const load = r.loadAverage;
    for (const [proc, s] of Object.entries(r.rss)) {
      if (proc === "client") continue;
      figures.push({
        name: `soak.${edge}.${proc}.slope`,
        value: s.slopeMiBPerHour,
        unit: "MiB/h",
        afterS: r.warmupS,
        durationS: r.durationS,
        load: `${load.start}-${load.end}`,
      });
      figures.push({ name: `soak.${edge}.${proc}.peak`, value: s.peakMiB, unit: "MiB" });
    }
    const d = r.delivery;
    figures.push({
      name: `soak.${edge}.delivery.p99`,
      value: d.p99Ms,
      unit: "ms",
      p50: d.p50Ms,
      delivered: d.delivered,
      expected: d.expected,
      overflows: d.overflows,
    });
  }
  return figures;
}

if (import.meta.main) {
  const a = parseSoakArgs(Deno.args);
  for (const edge of a.edges) {
    const report = {
      ...await runSoak({
        edge,
        durationMs: a.durationMs,
        streams: a.streams,
        watchFanout: a.watchFanout,
        unread: a.unread,
      }),
      watchFanout: a.watchFanout,
      unread: a.unread,
    };
    await recordSoak(report);
    console.log(JSON.stringify(report));
  }
}
