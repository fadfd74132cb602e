/**
 * The attack bench's arithmetic (bench/attack.ts), pure so it is tested on its
 * own: its flags, memory readings as MiB summaries, probe latencies, and the
 * targets from issue 25 with whether each is met. Every scenario's JSON line
 * carries a `targets` list ({name, value, limit, unit, met}) and `met` (all of
 * them), so a run reads as pass/fail without knowing the numbers by heart.
 */
import { pct } from "./proc.ts";
import type { AnonSplit, ProcMemDetail } from "./proc.ts";
import { parseDuration } from "./soak_report.ts";

/** The scenarios, in the order `all` runs them. */
export const SCENARIOS = ["handshakes", "watch-flood", "soak"] as const;
export type Scenario = typeof SCENARIOS[number];

/** The attack bench's flags. */
export interface AttackArgs {
  readonly scenarios: readonly Scenario[];
  /** The soak's length. @default 10 min */
  readonly soakMs: number;
  /** How long the slow handshakes are held. @default 25 s */
  readonly holdMs: number;
  /** Slow handshakes kept open at once. @default 4096 */
  readonly slow: number;
  /** Unread Watch streams the flood opens. @default 15000 */
  readonly floodStreams: number;
  /** The flood's config changes go on through the minute after (`--flood-churn-after`). */
  readonly floodChurnAfter: boolean;
  /** What the soak's applies change (`--change=sysctl|hostname`). @default "sysctl" */
  readonly change: "sysctl" | "hostname";
  /** Extra environment for machined (`--machined-env=NAME=VALUE`), to measure e.g. allocator knobs. */
  readonly machinedEnv: Readonly<Record<string, string>>;
  /** machined's V8 flags instead of its image's (`--machined-v8-flags=a,b`; empty: none). */
  readonly machinedV8Flags?: readonly string[];
  /** How the soak's memory samples reach /metrics (`--sample-connection=fresh|kept`). @default "fresh" */
  readonly sampleConnection: "fresh" | "kept";
}

/** Thrown for a flag the attack bench does not know or cannot read. */
export class AttackArgsError extends Error {
  override name = "AttackArgsError";
}

const USAGE = "--scenario=handshakes|watch-flood|soak[,...] --duration=10m --hold=25s " +
  "--slow=4096 --flood-streams=15000 --flood-churn-after --change=sysctl|hostname --machined-env=NAME=VALUE --machined-v8-flags=a,b " +
  "--sample-connection=fresh|kept";

/**
 * Parses `--scenario=` (repeatable or comma-separated; default every one),
 * `--duration=` (the soak's), `--hold=`, `--slow=` and `--flood-streams=`.
 * @throws AttackArgsError for an unknown flag or scenario, or a bad value.
 */
export function parseAttackArgs(args: readonly string[]): AttackArgs {
  const scenarios: Scenario[] = [];
  let soakMs = 10 * 60_000, holdMs = 25_000, slow = 4096, floodStreams = 15_000;
  const machinedEnv: Record<string, string> = {};
  let machinedV8Flags: string[] | undefined;
  let change: "sysctl" | "hostname" = "sysctl";
  let floodChurnAfter = false;
  let sampleConnection: "fresh" | "kept" = "fresh";
  const count = (flag: string, v: string) => {
    if (!/^[1-9]\d*$/.test(v)) throw new AttackArgsError(`${flag} needs a positive count: "${v}"`);
    return Number(v);
  };
  const duration = (flag: string, v: string) => {
    try {
      return parseDuration(v);
    } catch {
      throw new AttackArgsError(`${flag} needs a duration (90s, 10m): "${v}"`);
    }
  };
  for (const a of args) {
    const [flag, value = ""] = a.split(/=(.*)/s, 2);
    if (flag === "--scenario") {
      for (const s of value.split(",")) {
        if (!(SCENARIOS as readonly string[]).includes(s)) {
          throw new AttackArgsError(`unknown scenario "${s}" (${SCENARIOS.join(", ")})`);
        }
        if (!scenarios.includes(s as Scenario)) scenarios.push(s as Scenario);
      }
    } else if (flag === "--duration") soakMs = duration(flag, value);
    else if (flag === "--hold") holdMs = duration(flag, value);
    else if (flag === "--slow") slow = count(flag, value);
    else if (flag === "--flood-streams") floodStreams = count(flag, value);
    else if (a === "--flood-churn-after") floodChurnAfter = true;
    else if (flag === "--change" && (value === "sysctl" || value === "hostname")) change = value;
    else if (flag === "--sample-connection" && (value === "fresh" || value === "kept")) {
      sampleConnection = value;
    } else if (flag === "--machined-env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      const [name, v] = value.split(/=(.*)/s, 2);
      machinedEnv[name] = v;
    } else if (flag === "--machined-v8-flags") {
      machinedV8Flags = value.split(",").filter(Boolean);
    } else throw new AttackArgsError(`unknown argument "${a}" (attack flags: ${USAGE})`);
  }
  return {
    scenarios: scenarios.length > 0 ? scenarios : [...SCENARIOS],
    soakMs,
    holdMs,
    slow,
    floodStreams,
    floodChurnAfter,
    change,
    machinedEnv,
    sampleConnection,
    ...(machinedV8Flags ? { machinedV8Flags } : {}),
  };
}

/** One target: `value` must be at most (`<=`) or at least (`>=`) `limit`, in `unit`. */
export interface Target {
  readonly name: string;
  readonly value: number;
  readonly cmp: "<=" | ">=";
  readonly limit: number;
  readonly unit: string;
  /** A NaN value (nothing measured) is not met. */
  readonly met: boolean;
}

/** A target whose value must not exceed `limit`. */
export function atMost(name: string, value: number, limit: number, unit: string): Target {
  const met = !Number.isNaN(value) && value <= limit;
  return { name, value: round1(value), cmp: "<=", limit, unit, met };
}

/** A target whose value must reach `limit`. */
export function atLeast(name: string, value: number, limit: number, unit: string): Target {
  const met = !Number.isNaN(value) && value >= limit;
  return { name, value: round1(value), cmp: ">=", limit, unit, met };
}

/** `targets` and whether all of them are met. */
export function verdict(targets: readonly Target[]): { targets: readonly Target[]; met: boolean } {
  return { targets, met: targets.length > 0 && targets.every((t) => t.met) };
}

/** {@link ProcMemDetail} in MiB with one decimal. */
export interface MemMiB {
  rss: number;
  pss: number;
  rssAnon: number;
  rssFile: number;
}

export const round1 = (n: number) => Math.round(n * 10) / 10;

/** KiB readings as MiB. */
export function memMiB(m: ProcMemDetail): MemMiB {
  const f = (kib: number) => round1(kib / 1024);
  return { rss: f(m.rssKiB), pss: f(m.pssKiB), rssAnon: f(m.rssAnonKiB), rssFile: f(m.rssFileKiB) };
}

/** {@link AnonSplit} in MiB with one decimal. */
export function splitMiB(s: AnonSplit): { brk: number; smallMaps: number; otherMaps: number } {
  const f = (kib: number) => round1(kib / 1024);
  return { brk: f(s.brkKiB), smallMaps: f(s.smallMapsKiB), otherMaps: f(s.otherMapsKiB) };
}

/** The reading with the largest RSS (NaN readings skipped), or NaNs for none. */
export function peakOf(readings: readonly ProcMemDetail[]): ProcMemDetail {
  let best: ProcMemDetail | undefined;
  for (const r of readings) {
    if (Number.isFinite(r.rssKiB) && (!best || r.rssKiB > best.rssKiB)) best = r;
  }
  return best ?? { rssKiB: NaN, pssKiB: NaN, rssAnonKiB: NaN, rssFileKiB: NaN };
}

/** How a series of probe calls went: latencies of the ones served, and the failures. */
export interface ProbeSummary {
  readonly calls: number;
  readonly failures: number;
  /** Calls served but slower than the limit. */
  readonly slow: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The slowest call, failed ones counted at their timeout. */
  readonly maxMs: number;
}

/** One probe call: its latency, and whether it was served. */
export interface ProbeCall {
  readonly ms: number;
  readonly ok: boolean;
}

/** Summarizes probe calls against `limitMs`. */
export function summarizeProbes(calls: readonly ProbeCall[], limitMs: number): ProbeSummary {
  const served = calls.filter((c) => c.ok).map((c) => c.ms).sort((a, b) => a - b);
  return {
    calls: calls.length,
    failures: calls.length - served.length,
    slow: served.filter((ms) => ms > limitMs).length,
    p50Ms: round1(pct(served, 0.5)),
    p99Ms: round1(pct(served, 0.99)),
    maxMs: round1(calls.length > 0 ? Math.max(...calls.map((c) => c.ms)) : NaN),
  };
}

/** The worst a probe saw: its slowest call, or Infinity when any failed. */
export function worstProbeMs(p: ProbeSummary): number {
  return p.failures > 0 ? Infinity : p.maxMs;
}

const mibOf = (kib: number) => kib / 1024;

/** Issue 25's targets for the slow handshakes: the edge's peak RSS, the certificate client's worst call. */
export function handshakeTargets(edgePeakKiB: number, probe: ProbeSummary): Target[] {
  return [
    atMost("edge.rss.peak", mibOf(edgePeakKiB), 32, "MiB"),
    atMost("probe.worst", worstProbeMs(probe), 1000, "ms"),
  ];
}

/** What the Watch flood measured, as {@link floodTargets} reads it (KiB). */
export interface FloodFigures {
  readonly machinedIdleKiB: number;
  readonly machinedPeakKiB: number;
  /** A minute after the clients left. */
  readonly machinedAfterKiB: number;
  readonly refused: number;
}

/**
 * Issue 25's targets for the Watch flood: streams refused past the budget,
 * machined at most 64 MiB above idle at peak and back within 10 % of idle a
 * minute after the clients left.
 */
export function floodTargets(f: FloodFigures): Target[] {
  return [
    atLeast("streams.refused", f.refused, 1, "streams"),
    atMost("machined.rss.peak-idle", mibOf(f.machinedPeakKiB - f.machinedIdleKiB), 64, "MiB"),
    atMost(
      "machined.rss.after-vs-idle",
      ((f.machinedAfterKiB - f.machinedIdleKiB) / f.machinedIdleKiB) * 100,
      10,
      "%",
    ),
  ];
}

/** What the soak measured, as {@link soakTargets} reads it. */
export interface SoakFigures {
  readonly machinedIdleMiB: number;
  readonly machinedPeakMiB: number;
  readonly machinedSlopeMiBPerHour: number;
  readonly edgePeakMiB: number;
}

/**
 * Issue 25's targets for the soak: machined at most 24 MiB above idle, its
 * slope after the first minute at most 1 MiB/h, the edge at most 24 MiB.
 */
export function soakTargets(f: SoakFigures): Target[] {
  return [
    atMost("machined.rss.peak-idle", f.machinedPeakMiB - f.machinedIdleMiB, 24, "MiB"),
    atMost("machined.rss.slope", f.machinedSlopeMiBPerHour, 1, "MiB/h"),
    atMost("edge.rss.peak", f.edgePeakMiB, 24, "MiB"),
  ];
}
