/**
 * Issue 25, attack 1: slow TLS handshakes. `slow` TCP connections to the edge
 * from 16 loopback source addresses (127.0.0.2–127.0.0.17, as many per
 * address), each sending the first bytes of a ClientHello and then nothing,
 * kept at that count for `holdMs` (a connection the edge closes, at its
 * handshake timeout or when its handshake budget evicts it, is opened again
 * after 100 ms, as an attacker would), from a process of their own
 * (bench/attack_slow_pool.ts). Meanwhile a client with a valid
 * certificate, from 127.0.0.1, calls Version on a fresh connection every
 * 250 ms (the handshake is what slow handshakes starve). Reports the edge's
 * memory (idle, peak, and 10 s after the attackers left), the probe's
 * latencies and failures, the attackers' own counts, and the edge's counters
 * (accepted, refused by reason) from /metrics.
 */
import { createMachineClient } from "../api/client/mod.ts";
import { ATTACK_SOURCES, slowPoolProcess } from "./attack_slow_pool.ts";
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
    const pool = slowPoolProcess(node.port, o.slow);
    const probe = prober(node, 250, 5000);
    const t0 = performance.now();
    await sleep(o.holdMs);
    const lastHeld = s.readings.edge.at(-1) ?? idle.edge;
    await probe.stop();
    const held = await pool.stop();
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
