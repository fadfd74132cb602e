/**
 * `deno task bench attack [--scenario=handshakes|watch-flood|soak] [--duration=10m]`:
 * issue 25's three attacks on a dev node through the real edge, each on a
 * node of its own, each printed as one JSON line with its targets and whether
 * they are met, and appended to bench/results/attack.jsonl. The scenarios:
 * bench/attack_handshakes.ts (slow TLS handshakes), bench/attack_flood.ts
 * (unread Watch streams from one reader certificate) and the soak
 * (bench/soak.ts, with machined's idle figure taken before its streams open).
 * Flags: bench/attack_report.ts's parseAttackArgs. docs/api.md, "Performance".
 */
import { parseAttackArgs, type Scenario } from "./attack_report.ts";
import { runHandshakes } from "./attack_handshakes.ts";
import { runFlood } from "./attack_flood.ts";
import { runAttackSoak } from "./attack_soak.ts";

/** Runs the scenarios `args` name; each report is printed and recorded as it ends. */
export async function attackMain(args: readonly string[]): Promise<void> {
  const a = parseAttackArgs(args);
  const node = Object.keys(a.machinedEnv).length > 0 || a.machinedV8Flags
    ? { env: a.machinedEnv, v8Flags: a.machinedV8Flags }
    : undefined;
  const run: Record<Scenario, () => Promise<unknown>> = {
    handshakes: () => runHandshakes({ slow: a.slow, holdMs: a.holdMs, node }),
    "watch-flood": () => runFlood({ streams: a.floodStreams, churnAfter: a.floodChurnAfter, node }),
    soak: () =>
      runAttackSoak({
        durationMs: a.soakMs,
        change: a.change,
        node,
        sampleConnection: a.sampleConnection,
      }),
  };
  for (const s of a.scenarios) {
    const report = await run[s]();
    console.log(JSON.stringify(report));
    await recordAttack(report);
  }
}

/** Appends `report` to bench/results/attack.jsonl. */
async function recordAttack(report: unknown): Promise<void> {
  const dir = new URL("./results/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(new URL("attack.jsonl", dir), JSON.stringify(report) + "\n", {
    append: true,
  });
}

if (import.meta.main) await attackMain(Deno.args);
