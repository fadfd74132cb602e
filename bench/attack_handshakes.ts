/**
 * Issue 25, attack 1: slow TLS handshakes. `slow` TCP connections to the edge
 * from 16 loopback source addresses (127.0.0.2–127.0.0.17, as many per
 * address), each sending the first bytes of a ClientHello and then nothing,
 * kept at that count for `holdMs` (a connection the edge closes, at its
 * handshake timeout or at once when over its per-address bound, is opened
 * again after 100 ms, as an attacker would). Meanwhile a client with a valid
 * certificate, from 127.0.0.1, calls Version on a fresh connection every
 * 250 ms (the handshake is what slow handshakes starve). Reports the edge's
 * memory (idle, peak, and 10 s after the attackers left), the probe's
 * latencies and failures, the attackers' own counts, and the edge's counters
 * (accepted, refused by reason) from /metrics.
 */
import net from "node:net";
import { createMachineClient } from "../api/client/mod.ts";
import type { DevNodeOptions } from "./soak_node.ts";
import { type AttackNode, metricValues, sleep, startAttackNode } from "./attack_node.ts";
import { procMemDetail } from "./proc.ts";
import type { ProcMemDetail } from "./proc.ts";
import {
  handshakeTargets,
  memMiB,
  peakOf,
  type ProbeCall,
  summarizeProbes,
  verdict,
} from "./attack_report.ts";

/** The attackers' source addresses: 16 of them, none the probe's 127.0.0.1. */
export const ATTACK_SOURCES = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 2}`);

/** A TLS record header for a 512-byte handshake, then a ClientHello's first bytes: never finished. */
const PARTIAL_HELLO = new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03]);

/** What the attackers saw. */
interface SlowCounts {
  connected: number;
  connectErrors: number;
  /** Closed by the edge while we held them. */
  closedByEdge: number;
  /** Open right now. */
  open: number;
  peakOpen: number;
}

/** Keeps `total` slow handshakes open from {@link ATTACK_SOURCES} until `stop()`. */
function slowPool(port: number, total: number) {
  const c: SlowCounts = { connected: 0, connectErrors: 0, closedByEdge: 0, open: 0, peakOpen: 0 };
  const sockets = new Set<net.Socket>();
  let stopping = false;
  const open = (localAddress: string) => {
    if (stopping) return;
    const s = net.connect({ host: "127.0.0.1", port, localAddress });
    sockets.add(s);
    let connected = false;
    s.on("connect", () => {
      connected = true;
      c.connected++;
      c.peakOpen = Math.max(c.peakOpen, ++c.open);
      s.write(PARTIAL_HELLO);
    });
    s.on("data", () => {}); // an alert, if any: read and ignored
    s.on("error", () => {
      if (!connected) c.connectErrors++;
    });
    s.on("close", () => {
      sockets.delete(s);
      if (connected) c.open--;
      if (stopping) return;
      if (connected) c.closedByEdge++;
      setTimeout(() => open(localAddress), 100);
    });
  };
  const ramp = (async () => {
    for (let i = 0; i < total && !stopping; i++) {
      open(ATTACK_SOURCES[i % ATTACK_SOURCES.length]);
      if (i % 128 === 127) await sleep(20); // under the listen backlog
    }
  })();
  return {
    counts: c,
    async stop() {
      stopping = true;
      await ramp;
      for (const s of sockets) s.destroy();
      await sleep(200);
    },
  };
}

/** Version on a fresh connection every `everyMs` until `stop()`; each call's latency. */
export function prober(node: AttackNode, everyMs: number, timeoutMs: number) {
  const calls: ProbeCall[] = [];
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const next = performance.now() + everyMs;
      const client = createMachineClient({ ...node.admin, endpoint: `127.0.0.1:${node.port}` });
      const t0 = performance.now();
      const ok = await client.api.version({}, { timeoutMs }).then(() => true, () => false);
      calls.push({ ms: performance.now() - t0, ok });
      client.close();
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    calls,
    async stop() {
      stopping = true;
      await loop;
    },
  };
}

/** Samples `pid`'s memory every `everyMs` until `stop()`. */
export function sampler(pids: Record<string, number>, everyMs: number) {
  const readings: Record<string, ProcMemDetail[]> = {};
  for (const name of Object.keys(pids)) readings[name] = [];
  const take = async () => {
    for (const [name, pid] of Object.entries(pids)) readings[name].push(await procMemDetail(pid));
  };
  const timer = setInterval(take, everyMs);
  return {
    readings,
    async stop() {
      clearInterval(timer);
      await take();
    },
  };
}

/** Runs the scenario on its own node; resolves to its JSON report. */
export async function runHandshakes(o: { slow: number; holdMs: number; node?: DevNodeOptions }) {
  const node = await startAttackNode(o.node);
  try {
    await sleep(10_000); // settle: the first figures are the node at rest
    const idle = await node.mem();
    const before = metricValues(await node.metrics(), "machined_");
    const s = sampler({ edge: node.edgePid, machined: node.machinedPid, client: Deno.pid }, 500);
    const pool = slowPool(node.port, o.slow);
    const probe = prober(node, 250, 5000);
    const t0 = performance.now();
    await sleep(o.holdMs);
    const held = { ...pool.counts };
    const lastHeld = s.readings.edge.at(-1) ?? idle.edge;
    await probe.stop();
    await pool.stop();
    const heldMs = performance.now() - t0;
    await sleep(10_000);
    await s.stop();
    const after = await node.mem();
    const afterMetrics = metricValues(await node.metrics(), "machined_");
    const delta = (name: string) => (afterMetrics[name] ?? 0) - (before[name] ?? 0);
    const refused = Object.fromEntries(
      Object.keys(afterMetrics)
        .filter((k) => k.startsWith("machined_edge_tls_refused_by_reason_total{"))
        .map((k) => [/reason="([^"]*)"/.exec(k)![1], delta(k)]),
    );
    const probeSummary = summarizeProbes(probe.calls, 1000);
    const edgePeak = peakOf(s.readings.edge);
    return {
      bench: "attack",
      scenario: "handshakes",
      at: new Date().toISOString(),
      ...(o.node ? { nodeOptions: o.node } : {}),
      slow: o.slow,
      sources: ATTACK_SOURCES.length,
      heldS: Math.round(heldMs / 1000),
      edge: {
        idle: memMiB(idle.edge),
        peak: memMiB(edgePeak),
        last: memMiB(lastHeld),
        after10s: memMiB(after.edge),
      },
      machined: { idle: memMiB(idle.machined), peak: memMiB(peakOf(s.readings.machined)) },
      clientPeak: memMiB(peakOf(s.readings.client)),
      attackers: held,
      edgeCounters: {
        accepted: delta("machined_edge_connections_total"),
        refusedByReason: refused,
      },
      probe: probeSummary,
      ...verdict(handshakeTargets(edgePeak.rssKiB, probeSummary)),
    };
  } finally {
    await node.stop();
  }
}
