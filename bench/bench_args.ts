/**
 * `deno task bench`'s command line, parsed before any benchmark starts: `--help`
 * prints the usage, an unknown flag or suite name is a usage error (exit 2),
 * so a typo never spends minutes on the suites that were spelled right.
 */
import { parseAttackArgs } from "./attack_report.ts";
import { parseSoakArgs, type SoakArgs } from "./soak_report.ts";

/** Suites run when none is named. */
export const DEFAULT_SUITES = ["api", "config", "watch", "observe", "runtime"] as const;
/** Suites too long for every run: only when named. */
export const OPT_IN_SUITES = ["overhead", "heap", "soak"] as const;
/** A suite's name. */
export type SuiteName = typeof DEFAULT_SUITES[number] | typeof OPT_IN_SUITES[number];

/** `deno task bench --help`. */
export const BENCH_USAGE = `usage: deno task bench [SUITE...] [soak flags]
       deno task bench attack [attack flags]
  SUITE: ${DEFAULT_SUITES.join(", ")} (the default: all of them);
         opt-in: ${OPT_IN_SUITES.join(", ")}
  soak flags: --soak --duration=10m --edge=rust --streams=N --unread=N --watch-fanout=edge|machined
  attack flags: --scenario=handshakes|watch-flood|soak[,...] --duration=10m --hold=25s --slow=N
                --flood-streams=N --flood-churn-after --change=sysctl|hostname
                --machined-env=NAME=VALUE --machined-v8-flags=a,b --sample-connection=fresh|kept
  --help  this text`;

/** What a bench command line asks for. */
export type BenchRequest =
  | { kind: "help" }
  | { kind: "error"; message: string }
  | { kind: "attack"; args: string[] }
  | { kind: "suites"; soak: SoakArgs; wanted: SuiteName[] };

/** Parse and check `argv` without running anything. Pure. */
export function parseBenchArgs(argv: readonly string[]): BenchRequest {
  if (argv.includes("--help") || argv.includes("-h")) return { kind: "help" };
  try {
    if (argv[0] === "attack") {
      parseAttackArgs(argv.slice(1));
      return { kind: "attack", args: argv.slice(1) };
    }
    const soak = parseSoakArgs(argv);
    const named = soak.soak ? [...soak.rest, "soak"] : soak.rest;
    const known: readonly string[] = [...DEFAULT_SUITES, ...OPT_IN_SUITES];
    const unknown = named.find((n) => !known.includes(n));
    if (unknown !== undefined) {
      return {
        kind: "error",
        message: `unknown benchmark suite "${unknown}"; known: ${known.join(", ")}`,
      };
    }
    const wanted = (named.length > 0 ? named : [...DEFAULT_SUITES]) as SuiteName[];
    return { kind: "suites", soak, wanted };
  } catch (e) {
    return { kind: "error", message: (e as Error).message };
  }
}
