/**
 * Boots two disk images in turn (A B A B …, each with a snapshot disk so
 * every boot is a first boot of the same bytes) and reports, per boot, the
 * host's monotonic time from QEMU start to machined's `API ready` console
 * line and the boot's phases on the guest's own clock (imager/boot_console.ts:
 * kernel → machined-init → root mounted → machined's first JS → main() → API
 * ready); then each figure's median for A and for B, and its B/A ratio per
 * pair and their median. Alternating is what makes a before/after figure
 * trustworthy on a shared, noisy host: a load change hits both sides.
 *
 * Run: `deno run -A bench/boot_pair.ts BEFORE.img AFTER.img [pairs]`
 * (root for QEMU's files, qemu-system-x86_64, OVMF). One JSON object per
 * line, the summary last.
 *
 * @module
 */
import { API_READY, type BootPhases, bootPhases, FAIL, startVm } from "../imager/mod.ts";
import { freePort } from "../dev/testing.ts";

/** One boot's figures: null where the image does not print the line a phase needs. */
export interface BootFigures extends BootPhases {
  image: string;
  qemuStartToApiReadyS: number;
  machinedStartToApiReadyMs: number;
}

/** Boots `image` once (snapshot disk), waits for API ready, powers it off. */
export async function bootOnce(image: string, runDir: string): Promise<BootFigures> {
  const t0 = performance.now();
  const vm = await startVm({ image, runDir, snapshot: true, hostPort: freePort() });
  try {
    const m = await vm.waitForConsole(API_READY, { timeoutMs: 600_000, failOn: FAIL });
    const qemuStartToApiReadyS = +((performance.now() - t0) / 1000).toFixed(1);
    return {
      image,
      qemuStartToApiReadyS,
      machinedStartToApiReadyMs: Number(m[2]),
      ...bootPhases(await vm.console()),
    };
  } finally {
    await vm.stop({ gracefulMs: 0 });
  }
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
  const [a, b, pairsArg] = Deno.args;
  if (!a || !b) {
    console.error("usage: boot_pair.ts BEFORE.img AFTER.img [pairs]");
    Deno.exit(2);
  }
  const pairs = Number(pairsArg ?? 3);
  const runs: { a: BootFigures; b: BootFigures }[] = [];
  for (let i = 0; i < pairs; i++) {
    const fa = await bootOnce(a, "build/bench/boot-a");
    console.log(JSON.stringify({ pair: i, side: "A", ...fa }));
    const fb = await bootOnce(b, "build/bench/boot-b");
    console.log(JSON.stringify({ pair: i, side: "B", ...fb }));
    runs.push({ a: fa, b: fb });
  }
  console.log(JSON.stringify(summarizePairs(runs)));
}
