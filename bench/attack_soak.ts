/**
 * Issue 25, attack 3: the soak (bench/soak.ts: 1 000 Watch streams read as
 * fast as they come, a config change every 2 s) with machined's idle memory
 * read before the streams open, so its growth is measured from rest, and the
 * targets: machined at most 24 MiB above idle, a slope of at most 1 MiB/h
 * after the first minute, the edge at most 24 MiB. `change: "hostname"`
 * renames the node at every apply too, as the soak did. `node` changes what the
 * dev node runs with (MALLOC_ARENA_MAX, V8 flags), for measuring only.
 */
import { runSoak } from "./soak.ts";
import type { DevNodeOptions, SoakChange } from "./soak_node.ts";
import { soakTargets, verdict } from "./attack_report.ts";

/** Runs the soak for `durationMs`; resolves to its JSON report (samples left out). */
export async function runAttackSoak(
  o: {
    durationMs: number;
    change?: SoakChange;
    node?: DevNodeOptions;
    sampleConnection?: "fresh" | "kept";
  },
) {
  const r = await runSoak({
    edge: "rust",
    durationMs: o.durationMs,
    streams: 1000,
    idleSettleMs: 10_000,
    node: o.node,
    change: o.change,
    sampleConnection: o.sampleConnection,
  });
  const { samples, bench: _soak, ...rest } = r;
  const idle = r.idle!;
  return {
    bench: "attack",
    scenario: "soak",
    at: new Date().toISOString(),
    ...(o.node ? { nodeOptions: o.node } : {}),
    sampleConnection: o.sampleConnection ?? "fresh",
    ...rest,
    samples: samples.filter((_, i) => i % 6 === 0), // every 30 s
    ...verdict(soakTargets({
      machinedIdleMiB: idle.machined.rss,
      machinedPeakMiB: r.rss.machined.peakMiB,
      machinedSlopeMiBPerHour: r.rss.machined.slopeMiBPerHour,
      edgePeakMiB: r.rss.edge.peakMiB,
    })),
  };
}
