/**
 * Boots two disk images in turn (A B A B …, each with a snapshot disk so
 * every boot is a first boot of the same bytes) and reports, per boot, the
 * host's monotonic time from QEMU start to machined's `API ready` console
 * line (and, with `--client`, to the first Version answered over mTLS) and the
 * boot's phases on the guest's own clock (imager/boot_console.ts: kernel →
 * machined-init → root mounted → machined's first JS → main() → API ready);
 * with `--memory`, the footprint line's MemAvailable, PSS and RssAnon/RssFile
 * and machined's first page-out; then each figure's median for A and for B,
 * and its B/A ratio per pair and their median. Alternating is what makes a
 * before/after figure trustworthy on a shared, noisy host: a load change hits
 * both sides.
 *
 * Run: `deno run -A bench/boot_pair.ts BEFORE.img AFTER.img [pairs] [--client
 * FILE] [--memory footprint|page-out] [--label NAME]` (root for QEMU's files,
 * qemu-system-x86_64, OVMF). One JSON object per line, the summary last.
 *
 * @module
 */
import {
  API_READY,
  type BootMemory,
  bootMemory,
  type BootPhases,
  bootPhases,
  FAIL,
  FOOTPRINT,
  PAGE_OUT,
  startVm,
  type Vm,
  waitForApi,
} from "../imager/mod.ts";
import { freePort } from "../dev/testing.ts";
import { BOOT_PAIR_USAGE, type BootPairArgs, parseBootPairArgs } from "./boot_pair_args.ts";

/** One boot's figures: null where the image does not print the line a figure needs. */
export interface BootFigures extends BootPhases, BootMemory {
  image: string;
  qemuStartToApiReadyS: number;
  machinedStartToApiReadyMs: number;
  /** QEMU start → Version answered over mTLS from the host (null without `--client`). */
  qemuStartToFirstAnswerS: number | null;
  /** From the footprint line (containerd ready + 5 s); null without `--memory`. */
  memAvailableMiB: number | null;
  machinedPssMiB: number | null;
  apidPssMiB: number | null;
}

/** What a boot waits for after `API ready` (see {@link BootPairArgs}). */
export type BootWait = Pick<BootPairArgs, "client" | "memory">;

/** Boots `image` once (snapshot disk), waits for API ready and what `wait` asks, powers it off. */
export async function bootOnce(
  image: string,
  runDir: string,
  wait: BootWait = {},
): Promise<BootFigures> {
  const t0 = performance.now();
  const hostPort = freePort();
  const vm = await startVm({ image, runDir, snapshot: true, hostPort });
  const since = () => +((performance.now() - t0) / 1000).toFixed(1);
  try {
    const m = await vm.waitForConsole(API_READY, { timeoutMs: 600_000, failOn: FAIL });
    const qemuStartToApiReadyS = since();
    let qemuStartToFirstAnswerS: number | null = null;
    if (wait.client) {
      await waitForApi(wait.client, hostPort, 300_000);
      qemuStartToFirstAnswerS = since();
    }
    const memory = await waitForMemory(vm, wait.memory);
    return {
      image,
      qemuStartToApiReadyS,
      qemuStartToFirstAnswerS,
      machinedStartToApiReadyMs: Number(m[2]),
      ...bootPhases(await vm.console()),
      ...memory,
    };
  } finally {
    await vm.stop({ gracefulMs: 0 });
  }
}

/** The memory part of {@link BootFigures}. */
export type MemoryFigures =
  & BootMemory
  & Pick<BootFigures, "memAvailableMiB" | "machinedPssMiB" | "apidPssMiB">;

/**
 * Waits for the footprint line (`footprint`) or the first page-out's
 * (`page-out`, taking the footprint line if it came before: a node without
 * containerd never prints one); nulls when not asked.
 */
async function waitForMemory(vm: Vm, wait: BootWait["memory"]): Promise<MemoryFigures> {
  const opts = { timeoutMs: 600_000, failOn: FAIL };
  if (wait === "footprint") return memoryFigures(await vm.waitForConsole(FOOTPRINT, opts), null);
  if (wait !== "page-out") return memoryFigures(null, null);
  const out = await vm.waitForConsole(PAGE_OUT, opts);
  return memoryFigures(FOOTPRINT.exec(await vm.console()), out);
}

/** The figures of a {@link FOOTPRINT} match and a {@link PAGE_OUT} match, in MiB. Pure. */
export function memoryFigures(
  foot: RegExpExecArray | null,
  pageOut: RegExpExecArray | null,
): MemoryFigures {
  const mib = (v: string | undefined) => v === undefined ? null : +(Number(v) / 1024).toFixed(1);
  return {
    memAvailableMiB: mib(foot?.[1]),
    machinedPssMiB: mib(foot?.[2]),
    apidPssMiB: mib(foot?.[3]),
    ...bootMemory(foot, pageOut),
  };
}

/** A figure of {@link BootFigures} the summary takes medians and ratios of. */
export type BootFigure = Exclude<keyof BootFigures, "image">;

/** The summary line: per figure, the medians of A and B, the B/A ratio of each pair and its median. */
export interface PairSummary<K extends string = BootFigure> {
  suite: "bootPair";
  pairs: number;
  medianA: Record<K, number | null>;
  medianB: Record<K, number | null>;
  ratiosBOverA: Record<K, (number | null)[]>;
  medianRatioBOverA: Record<K, number | null>;
}

/** Summarizes alternated boots; a figure no boot printed is null throughout. Pure. */
export function summarizePairs(runs: readonly { a: BootFigures; b: BootFigures }[]): PairSummary {
  return summarizeFigurePairs<BootFigure>(runs);
}

/**
 * {@link summarizePairs} for any boot's figures (bench/boot_encryption.ts has its
 * own): every key but `image` whose values are numbers or null. Pure.
 */
export function summarizeFigurePairs<K extends string>(
  runs: readonly { a: object; b: object }[],
): PairSummary<K> {
  const first: Readonly<Record<string, unknown>> = { ...runs[0]?.a };
  const keys = Object.keys(first).filter((k) =>
    k !== "image" && (typeof first[k] === "number" || first[k] === null)
  ) as K[];
  const at = (f: object, k: K) => {
    const v = (f as Readonly<Record<string, unknown>>)[k];
    return typeof v === "number" ? v : null;
  };
  const per = <T>(f: (k: K) => T) => Object.fromEntries(keys.map((k) => [k, f(k)])) as Record<K, T>;
  const ratios = per((k) => runs.map((r) => ratio(at(r.b, k), at(r.a, k))));
  return {
    suite: "bootPair",
    pairs: runs.length,
    medianA: per((k) => median(runs.map((r) => at(r.a, k)))),
    medianB: per((k) => median(runs.map((r) => at(r.b, k)))),
    ratiosBOverA: ratios,
    medianRatioBOverA: per((k) => median(ratios[k])),
  };
}

function ratio(b: number | null, a: number | null): number | null {
  return a === null || b === null || a === 0 ? null : +(b / a).toFixed(2);
}

/** The median of the figures present, to hundredths; null when none is. */
function median(xs: readonly (number | null)[]): number | null {
  const s = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (s.length === 0) return null;
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return +m.toFixed(2);
}

if (import.meta.main) {
  const args = parseBootPairArgs(Deno.args);
  if ("error" in args) {
    console.error(`error: ${args.error}\n${BOOT_PAIR_USAGE}`);
    Deno.exit(2);
  }
  const label = args.label ? { label: args.label } : {};
  const runs: { a: BootFigures; b: BootFigures }[] = [];
  for (let i = 0; i < args.pairs; i++) {
    const fa = await bootOnce(args.before, "build/bench/boot-a", args);
    console.log(JSON.stringify({ ...label, pair: i, side: "A", ...fa }));
    const fb = await bootOnce(args.after, "build/bench/boot-b", args);
    console.log(JSON.stringify({ ...label, pair: i, side: "B", ...fb }));
    runs.push({ a: fa, b: fb });
  }
  console.log(JSON.stringify({ ...label, at: new Date().toISOString(), ...summarizePairs(runs) }));
}
