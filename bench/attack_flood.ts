/**
 * Issue 25, attack 2: `streams` Watch streams (MachineConfig) from one reader
 * certificate, never read, over as many HTTP/2 connections as the edge's
 * 100-streams-per-connection SETTINGS needs (bench/attack_h2.ts), while an
 * admin changes the config every 2 s (so every stream has events queued
 * somewhere). The streams are held 30 s once opened, then the clients leave,
 * and the node is read again a minute later. Reports machined's and the edge's
 * memory idle (before), at peak and a minute after; how many streams were
 * accepted and how many refused (by HTTP/2 reset code, or trailers-only with
 * a gRPC status, which a decoded probe call made at the peak reads); whether
 * an admin's Version still answered during the flood; and this client's own
 * memory, so it can be seen not to dominate.
 */
import http2 from "node:http2";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { createMachineClient } from "../api/client/mod.ts";
import { WatchRequestSchema } from "../api/gen/machined/v1/machine_pb.ts";
import { ApplyMode } from "../api/gen/machined/v1/resources_pb.ts";
import { h2Client } from "../api/server/testing_h2.ts";
import { WATCH_PATH } from "../api/server/mod.ts";
import {
  type AttackNode,
  type Creds,
  metricValues,
  sleep,
  startAttackNode,
} from "./attack_node.ts";
import { floodConnect, type FloodConnection, type FloodCounts } from "./attack_h2.ts";
import { prober, sampler } from "./attack_handshakes.ts";
import { configWithSeq, type DevNodeOptions } from "./soak_node.ts";
import { floodTargets, memMiB, peakOf, summarizeProbes, verdict } from "./attack_report.ts";

const WATCH_REQUEST = toBinary(
  WatchRequestSchema,
  create(WatchRequestSchema, { type: "MachineConfig" }),
);
/** The edge's SETTINGS_MAX_CONCURRENT_STREAMS (native-ops/edge/src/options.rs). */
const PER_CONNECTION = 100;

/** An admin applies a changed config every `everyMs` until `stop()`. */
function configChurn(node: AttackNode, everyMs: number) {
  const admin = createMachineClient({ ...node.admin, endpoint: `127.0.0.1:${node.port}` });
  let stopping = false, applies = 0, errors = 0;
  const loop = (async () => {
    const base = await Deno.readTextFile(join(node.stateDir, "config.yaml"));
    for (let seq = 1; !stopping; seq++) {
      const next = performance.now() + everyMs;
      applies++;
      await admin.api.applyConfiguration(
        { configYaml: configWithSeq(base, seq), mode: ApplyMode.NO_REBOOT },
        { timeoutMs: 30_000 },
      ).catch(() => errors++);
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      admin.close();
      return { applies, errors };
    },
  };
}

/** One more Watch as the reader, decoded: its gRPC status if refused, "accepted" if it streams. */
async function probeWatch(port: number, creds: Creds): Promise<Record<string, unknown>> {
  const session = http2.connect(`https://127.0.0.1:${port}`, {
    ca: creds.caPem,
    cert: creds.certPem,
    key: creds.keyPem,
  });
  const client = h2Client(session);
  let messages = 0;
  const call = client.call(WATCH_PATH, WATCH_REQUEST, () => messages++);
  const ended = await Promise.race([call.done, sleep(5000).then(() => undefined)]);
  client.close();
  if (!ended) return { outcome: messages > 0 ? "accepted" : "no answer in 5 s", messages };
  return {
    outcome: "ended",
    grpcStatus: ended["grpc-status"],
    grpcMessage: ended["grpc-message"],
  };
}

/** How many file descriptors `pid` has open (its upstream connections among them). */
async function fds(pid: number): Promise<number> {
  let n = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
  return n;
}

/** The gauges the flood reads from /metrics (NaN when absent). */
function gauges(text: string) {
  const m = metricValues(text, "machined_");
  return {
    heapBytes: m["machined_process_heap_used_bytes"] ?? NaN,
    watches: m["machined_store_watches_open"] ?? NaN,
    connections: m["machined_edge_connections_open"] ?? NaN,
    apiStreams: m[`machined_api_streams_open{method="Watch"}`] ?? 0,
  };
}

function total(conns: readonly FloodConnection[], failedConnections: number) {
  const sum: FloodCounts = { opened: 0, accepted: 0, trailersOnly: 0, resets: {}, dataBytes: 0 };
  const goaways: Record<number, number> = {};
  for (const { counts: c } of conns) {
    sum.opened += c.opened;
    sum.accepted += c.accepted;
    sum.trailersOnly += c.trailersOnly;
    sum.dataBytes += c.dataBytes;
    for (const [code, n] of Object.entries(c.resets)) {
      sum.resets[Number(code)] = (sum.resets[Number(code)] ?? 0) + n;
    }
    if (c.goaway !== undefined) goaways[c.goaway] = (goaways[c.goaway] ?? 0) + 1;
  }
  const reset = Object.values(sum.resets).reduce((a, b) => a + b, 0);
  const unanswered = sum.opened - sum.accepted - sum.trailersOnly - reset;
  return { connections: conns.length, failedConnections, ...sum, unanswered, goaways };
}

/** Runs the scenario on its own node; resolves to its JSON report. */
export async function runFlood(
  o: {
    streams: number;
    holdMs?: number;
    afterMs?: number;
    /** Keep changing the config through the minute after the clients left (the node lives on). */
    churnAfter?: boolean;
    node?: DevNodeOptions;
  },
) {
  const node = await startAttackNode(o.node);
  try {
    const reader = await node.issue("os:reader", "flood");
    await sleep(10_000);
    const idle = await node.mem();
    const idleSplit = await node.split();
    const idleM = gauges(await node.metrics());
    const idleFds = await fds(node.machinedPid);
    const s = sampler({ edge: node.edgePid, machined: node.machinedPid, client: Deno.pid }, 1000);
    const churn = configChurn(node, 2000);
    const probe = prober(node, 1000, 5000);
    const conns: FloodConnection[] = [];
    let failed = 0;
    const t0 = performance.now();
    for (let left = o.streams; left > 0 && performance.now() - t0 < 120_000;) {
      const batch = [];
      for (let i = 0; i < 10 && left > 0; i++, left -= PER_CONNECTION) {
        const n = Math.min(PER_CONNECTION, left);
        batch.push(
          floodConnect(node.port, reader).then((c) => {
            conns.push(c);
            c.open(WATCH_PATH, WATCH_REQUEST, n);
          }, () => failed++),
        );
      }
      await Promise.all(batch);
      await sleep(100);
    }
    const rampS = Math.round((performance.now() - t0) / 1000);
    await sleep(o.holdMs ?? 30_000);
    const atPeak = total(conns, failed);
    const heldSplit = await node.split();
    const extra = await probeWatch(node.port, reader);
    const heldM = gauges(await node.metrics().catch(() => ""));
    const heldFds = await fds(node.machinedPid);
    await probe.stop();
    const applied = o.churnAfter ? undefined : await churn.stop();
    for (const c of conns) c.close();
    const left = performance.now();
    await sleep(o.afterMs ?? 60_000);
    const applies = applied ?? await churn.stop();
    await s.stop();
    const after = await node.mem();
    const afterSplit = await node.split();
    const afterM = gauges(await node.metrics());
    const refused = atPeak.trailersOnly + Object.values(atPeak.resets).reduce((a, b) => a + b, 0);
    const machinedPeak = peakOf(s.readings.machined);
    return {
      bench: "attack",
      scenario: "watch-flood",
      at: new Date().toISOString(),
      ...(o.node ? { nodeOptions: o.node } : {}),
      streams: o.streams,
      rampS,
      afterS: Math.round((performance.now() - left) / 1000),
      streamCounts: { ...atPeak, refused },
      extraWatch: extra,
      applies,
      churnAfter: o.churnAfter ?? false,
      machined: {
        idle: memMiB(idle.machined),
        peak: memMiB(machinedPeak),
        after: memMiB(after.machined),
        heapUsedMiB: [idleM, heldM, afterM].map((m) => Math.round(m.heapBytes / 104857.6) / 10),
      },
      /** Open store watches and edge connections, idle / held / a minute after: is everything let go? */
      open: {
        storeWatches: [idleM.watches, heldM.watches, afterM.watches],
        edgeConnections: [idleM.connections, heldM.connections, afterM.connections],
        apiStreams: [idleM.apiStreams, heldM.apiStreams, afterM.apiStreams],
        machinedFds: [idleFds, heldFds, await fds(node.machinedPid)],
      },
      edge: {
        idle: memMiB(idle.edge),
        peak: memMiB(peakOf(s.readings.edge)),
        after: memMiB(after.edge),
      },
      anonSplit: { idle: idleSplit, held: heldSplit, after: afterSplit },
      clientPeak: memMiB(peakOf(s.readings.client)),
      adminProbe: summarizeProbes(probe.calls, 1000),
      ...verdict(floodTargets({
        machinedIdleKiB: idle.machined.rssKiB,
        machinedPeakKiB: machinedPeak.rssKiB,
        machinedAfterKiB: after.machined.rssKiB,
        refused,
      })),
    };
  } finally {
    await node.stop();
  }
}
