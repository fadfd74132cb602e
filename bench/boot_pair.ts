/**
 * Boots two disk images in turn (A B A B …, each with a snapshot disk so
 * every boot is a first boot of the same bytes) and reports, per boot, the
 * host's monotonic time from QEMU start to machined's `API ready` console
 * line and the guest's own uptime at that line; then the medians and the
 * A/B ratio of each pair. Alternating is what makes a before/after figure
 * trustworthy on a shared, noisy host: a load change hits both sides.
 *
 * Run: `deno run -A bench/boot_pair.ts BEFORE.img AFTER.img [pairs]`
 * (root for QEMU's files, qemu-system-x86_64, OVMF). One JSON object per
 * line, the summary last.
 *
 * @module
 */
import { startVm } from "../imager/mod.ts";
import { freePort } from "../dev/testing.ts";

const READY = /machined: API ready pid=\d+ port=\d+ machined_ms=(\d+) uptime_s=([\d.]+)/;
const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;

/** One boot's figures. */
export interface BootFigures {
  image: string;
  qemuStartToApiReadyS: number;
  kernelStartToApiReadyS: number;
  machinedStartToApiReadyMs: number;
}

/** Boots `image` once (snapshot disk), waits for API ready, powers it off. */
export async function bootOnce(image: string, runDir: string): Promise<BootFigures> {
  const t0 = performance.now();
  const vm = await startVm({ image, runDir, snapshot: true, hostPort: freePort() });
  try {
    const m = await vm.waitForConsole(READY, { timeoutMs: 600_000, failOn: FAIL });
    return {
      image,
      qemuStartToApiReadyS: +((performance.now() - t0) / 1000).toFixed(1),
      kernelStartToApiReadyS: Number(m[2]),
      machinedStartToApiReadyMs: Number(m[1]),
    };
  } finally {
    await vm.stop({ gracefulMs: 0 });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return +m.toFixed(1);
};

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
  const col = (side: "a" | "b", k: keyof Omit<BootFigures, "image">) =>
    median(runs.map((r) => r[side][k]));
  console.log(JSON.stringify({
    suite: "bootPair",
    pairs,
    medianA: {
      qemuStartToApiReadyS: col("a", "qemuStartToApiReadyS"),
      kernelStartToApiReadyS: col("a", "kernelStartToApiReadyS"),
    },
    medianB: {
      qemuStartToApiReadyS: col("b", "qemuStartToApiReadyS"),
      kernelStartToApiReadyS: col("b", "kernelStartToApiReadyS"),
    },
    ratiosBOverA: runs.map((r) =>
      +(r.b.qemuStartToApiReadyS / r.a.qemuStartToApiReadyS).toFixed(2)
    ),
  }));
}
