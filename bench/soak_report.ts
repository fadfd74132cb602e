/**
 * The soak's arithmetic (bench/soak.ts), pure so it is tested on its own:
 * RSS samples over time, the least-squares slope of each process's RSS after
 * the warm-up (the figure a leak shows in: a process that plateaus has a
 * slope near zero, one that leaks a steady one), and the one JSON report.
 */
import { pct } from "./proc.ts";

/** One reading of every measured process, `tMs` after the soak started. */
export interface RssSample {
  readonly tMs: number;
  /** VmRSS in KiB by process name (`machined`, `edge`, ...). */
  readonly rssKiB: Readonly<Record<string, number>>;
}

/** What the soak reports of one process's RSS. */
export interface RssSummary {
  readonly firstMiB: number;
  readonly peakMiB: number;
  readonly lastMiB: number;
  /** Least-squares slope of RSS after the warm-up, MiB per hour; NaN with fewer than 2 samples. */
  readonly slopeMiBPerHour: number;
  /** Samples the slope was fitted to. */
  readonly fitted: number;
}

/**
 * The least-squares slope of y over x (dy/dx) for `points` as [x, y]; NaN for
 * fewer than two points or when every x is the same.
 */
export function leastSquaresSlope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return NaN;
  let sx = 0, sy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
  }
  const mx = sx / n, my = sy / n;
  let num = 0, den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) * (x - mx);
  }
  return den === 0 ? NaN : num / den;
}

const MIB = 1024;
const HOUR_MS = 3_600_000;
const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * `proc`'s RSS over `samples`: first, peak and last (MiB), and the slope in
 * MiB/h fitted to the samples at or after `warmupMs` (a missing or NaN reading
 * is skipped, so a process that died leaves a gap, not a zero).
 */
export function summarizeRss(
  samples: readonly RssSample[],
  proc: string,
  warmupMs: number,
): RssSummary {
  const readings = samples
    .map((s) => [s.tMs, s.rssKiB[proc]] as const)
    .filter(([, kib]) => Number.isFinite(kib));
  const fit = readings
    .filter(([t]) => t >= warmupMs)
    .map(([t, kib]) => [t / HOUR_MS, kib / MIB] as const);
  const mibs = readings.map(([, kib]) => kib / MIB);
  return {
    firstMiB: round1(mibs[0] ?? NaN),
    peakMiB: round1(mibs.length > 0 ? Math.max(...mibs) : NaN),
    lastMiB: round1(mibs.at(-1) ?? NaN),
    slopeMiBPerHour: round1(leastSquaresSlope(fit)),
    fitted: fit.length,
  };
}

/** What the soak's clients counted. */
export interface SoakDelivery {
  readonly streams: number;
  readonly applies: number;
  /** Applies that failed (the call threw). */
  readonly applyErrors: number;
  /** MachineConfig updates that reached a stream. */
  readonly delivered: number;
  /** applies × streams. */
  readonly expected: number;
  /** `overflow` messages received. */
  readonly overflows: number;
  /** Streams that ended before the soak did. */
  readonly streamsEnded: number;
  /** From the apply call to each stream's update, ms (any order). */
  readonly latenciesMs: readonly number[];
}

/** Options of {@link soakReport}. */
export interface SoakReportInput {
  readonly edge: string;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly applyEveryMs: number;
  readonly samples: readonly RssSample[];
  readonly delivery: SoakDelivery;
  /** The host's load average (1 min) at the start and the end: the machine is shared. */
  readonly load: readonly [number, number];
}

/** The soak's one JSON object: every sample, and the per-process summaries. */
export function soakReport(o: SoakReportInput) {
  const procs = [...new Set(o.samples.flatMap((s) => Object.keys(s.rssKiB)))];
  const lat = [...o.delivery.latenciesMs].sort((a, b) => a - b);
  const seconds = o.durationMs / 1000;
  return {
    bench: "soak",
    edge: o.edge,
    durationS: Math.round(seconds),
    warmupS: Math.round(o.warmupMs / 1000),
    applyEveryMs: o.applyEveryMs,
    loadAverage: { start: o.load[0], end: o.load[1] },
    rss: Object.fromEntries(procs.map((p) => [p, summarizeRss(o.samples, p, o.warmupMs)])),
    delivery: {
      streams: o.delivery.streams,
      applies: o.delivery.applies,
      applyErrors: o.delivery.applyErrors,
      delivered: o.delivery.delivered,
      expected: o.delivery.expected,
      eventsPerSecond: round1(o.delivery.delivered / seconds),
      overflows: o.delivery.overflows,
      streamsEnded: o.delivery.streamsEnded,
      p50Ms: round1(pct(lat, 0.5)),
      p99Ms: round1(pct(lat, 0.99)),
      maxMs: round1(lat.at(-1) ?? NaN),
    },
    samples: o.samples.map((s) => ({
      tS: Math.round(s.tMs / 100) / 10,
      ...Object.fromEntries(Object.entries(s.rssKiB).map(([p, k]) => [p, round1(k / MIB)])),
    })),
  };
}

/** The soak's duration from a flag value: `90s`, `10m`, `1h`, or plain minutes. */
export function parseDuration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!m) throw new Error(`invalid soak duration "${value}" (e.g. 90s, 10m, 1h)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: HOUR_MS }[(m[2] ?? "m") as "m"];
  return Number(m[1]) * unit;
}

/** The soak's command-line flags, and the arguments that are not its own. */
export interface SoakArgs {
  /** `--soak` was given (bench/main.ts runs the soak only then). */
  readonly soak: boolean;
  readonly durationMs: number;
  /** Only `rust` (machined-edge) since the Deno apid was removed; kept in the figure names. */
  readonly edges: readonly "rust"[];
  /** Where Watch is fanned out (machined-edge's `--watch-fanout`). @default "edge" */
  readonly watchFanout: "edge" | "machined";
  /** Streams opened beside the readers whose client never reads them. @default 0 */
  readonly unread: number;
  readonly streams: number;
  /** Everything else, in order (bench/main.ts's suite names). */
  readonly rest: readonly string[];
}

/**
 * Parses `--soak`, `--duration=10m`, `--edge=rust` (the only edge left; the
 * Deno apid it was compared with is gone) and `--streams=1000` out of `args`.
 * @throws Error for a bad value or an unknown `--` flag.
 */
export function parseSoakArgs(args: readonly string[]): SoakArgs {
  let soak = false, durationMs = 10 * 60_000, streams = 1000, unread = 0;
  let watchFanout: "edge" | "machined" = "edge";
  const edges: "rust"[] = ["rust"];
  const rest: string[] = [];
  for (const a of args) {
    const [flag, value = ""] = a.split(/=(.*)/s, 2);
    if (a === "--soak") soak = true;
    else if (flag === "--duration") durationMs = parseDuration(value);
    else if (flag === "--streams" && /^\d+$/.test(value)) streams = Number(value);
    else if (flag === "--edge" && value === "rust") continue;
    else if (flag === "--watch-fanout" && (value === "edge" || value === "machined")) {
      watchFanout = value;
    } else if (flag === "--unread" && /^\d+$/.test(value)) unread = Number(value);
    else if (a.startsWith("--")) {
      throw new Error(
        `unknown or invalid flag "${a}" (soak flags: --soak --duration=10m --edge=rust --streams=N --unread=N --watch-fanout=edge|machined)`,
      );
    } else rest.push(a);
  }
  return { soak, durationMs, edges, streams, watchFanout, unread, rest };
}
