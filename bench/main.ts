/**
 * `deno task bench`: runs every benchmark and prints one JSON object per line
 * (machine-readable), then writes them all to bench/results/latest.json.
 * Pass names to run a subset: `deno task bench runtime api config watch`. The QEMU boot
 * figures come from `deno task e2e` (bench/results/boot.json). Opt-in suites run
 * only when named: `deno task bench overhead` (OVERHEAD_MINUTES, default 10), `deno task bench
 * heap` (machined's memory under V8 flag sets, about 8 minutes), and `deno task bench
 * --soak [--duration=10m]` (bench/soak.ts: RSS over a long Watch load; its full reports go to
 * bench/results/soak.jsonl). `deno task bench attack [--scenario=handshakes|watch-flood|soak]
 * [--duration=10m]` runs issue 25's attacks alone (bench/attack.ts, bench/results/attack.jsonl).
 */
import { configDryRunCost, configValidation } from "./config_bench.ts";
import { configPatchCost } from "./config_patch_bench.ts";
import { observeScaling } from "./observe_bench.ts";
import { heapFlags } from "./heap_bench.ts";
import { observerOverhead } from "./overhead_bench.ts";
import { watchBench } from "./watch_bench.ts";
import { soakFigures } from "./soak.ts";
import { attackMain } from "./attack.ts";
import type { SoakArgs } from "./soak_report.ts";
import {
  BENCH_USAGE,
  type DEFAULT_SUITES,
  type OPT_IN_SUITES,
  parseBenchArgs,
  type SuiteName,
} from "./bench_args.ts";
import { controllerChain, type Figure, storeThroughput, watchFanout } from "./runtime_bench.ts";

/**
 * Runs bench/api_bench.ts (it spawns machined's side and apid, machined-edge)
 * and flattens its JSON into `api.edge.*` figures (the names they had beside
 * the Deno apid's `api.*`, which docs/decisions.md keeps).
 */
async function apiSuite(): Promise<Figure[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./api_bench.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`api bench failed with code ${out.code}`);
  const line = new TextDecoder().decode(out.stdout).trim().split("\n").pop()!;
  const r = JSON.parse(line);
  const kib = (n: number) => +(n / 1024).toFixed(1);
  const figures: Figure[] = [
    { name: "api.start", value: r.startMs, unit: "ms" },
    { name: "api.get.p50", value: r.unaryGet.p50Ms, unit: "ms" },
    { name: "api.get.p99", value: r.unaryGet.p99Ms, unit: "ms" },
    { name: "api.get.rps", value: r.unaryGet.requestsPerSecond, unit: "req/s", inFlight: 16 },
    {
      name: "api.get.lean.rps",
      value: r.unaryGetLean.requestsPerSecond,
      unit: "req/s",
      inFlight: 16,
      p50: r.unaryGetLean.p50Ms,
      p99: r.unaryGetLean.p99Ms,
    },
    { name: "api.idle.rss.machined", value: kib(r.idleRss.machinedKiB), unit: "MiB" },
    { name: "api.idle.rss.apid", value: kib(r.idleRss.apidKiB), unit: "MiB" },
    { name: "api.watch1000.rss.machined", value: kib(r.watch.rss.machinedKiB), unit: "MiB" },
    { name: "api.watch1000.rss.apid", value: kib(r.watch.rss.apidKiB), unit: "MiB" },
    {
      name: "api.watch1000.delivery.p99",
      value: r.watch.deliveryP99Ms,
      unit: "ms",
      p50: r.watch.deliveryP50Ms,
      delivered: r.watch.delivered,
      expected: r.watch.expected,
    },
  ];
  return figures.map((f) => ({
    ...f,
    name: f.name.replace(/^api\./, "api.edge.").replace(/\.apid$/, ".edge"),
  }));
}

const suites: Record<typeof DEFAULT_SUITES[number], () => Promise<Figure[]>> = {
  api: apiSuite,
  config: async () =>
    await Promise.resolve([...configValidation(), ...configDryRunCost(), ...configPatchCost()]),
  // machined's side alone, on its Unix socket (no apid): 100 and 1000 Watch streams.
  watch: () => watchBench([100, 1000]),
  observe: observeScaling,
  runtime: async () => [
    ...storeThroughput(),
    await watchFanout(1),
    await watchFanout(100),
    await watchFanout(1000, 100),
    await controllerChain(),
  ],
};

/** Runs the suites `wanted` asks for, prints a JSON line per figure and writes latest.json. */
async function runSuites(wanted: readonly SuiteName[], args: SoakArgs): Promise<void> {
  /** Too long for every run (minutes of wall time): only when named. */
  const optIn: Record<typeof OPT_IN_SUITES[number], () => Promise<Figure[]>> = {
    overhead: observerOverhead,
    heap: () => heapFlags(),
    soak: () => soakFigures(args),
  };
  const all: Figure[] = [];
  for (const name of wanted) {
    const suite = name in suites
      ? suites[name as keyof typeof suites]
      : optIn[name as keyof typeof optIn];
    for (const figure of await suite()) {
      const line = { suite: name, ...figure };
      console.log(JSON.stringify(line));
      all.push(line);
    }
  }
  const dir = new URL("./results/", import.meta.url);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    new URL("latest.json", dir),
    JSON.stringify(
      { at: new Date().toISOString(), deno: Deno.version.deno, figures: all },
      null,
      2,
    ) +
      "\n",
  );
}

if (import.meta.main) {
  const r = parseBenchArgs(Deno.args);
  if (r.kind === "help") {
    console.log(BENCH_USAGE);
    Deno.exit(0);
  }
  if (r.kind === "error") {
    console.error(`error: ${r.message}\n${BENCH_USAGE}`);
    Deno.exit(2);
  }
  if (r.kind === "attack") {
    await attackMain(r.args);
    Deno.exit(0);
  }
  await runSuites(r.wanted, r.soak);
}
