/**
 * machined's memory under V8 flag sets, as the image runs it: bundled with
 * `deno bundle`, with a code cache warmed under the same flags
 * (imager/code_cache.ts) or `--no-code-cache`, in dev mode (fakes, the real
 * controllers and API host; apid is machined-edge, which has no V8). (The
 * sets were first measured for the Deno apid too: docs/decisions.md.) After
 * 40 API calls and a 10 s settle, VmRSS and Pss
 * (/proc/PID/smaps_rollup) are read three times, 2 s apart; the median is
 * reported. Opt-in: `deno task bench heap`, or
 * `deno run -A bench/heap_bench.ts [name=flag,flag ...]` for other sets.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMachineClient } from "../api/client/mod.ts";
import { v8FlagsArgs } from "../layout/mod.ts";
import { bundleProgram, warmDenoDir } from "../imager/mod.ts";
import { edgeBinaryPath } from "../api/edge/mod.ts";
import { readClientConfig, resolveCredentials } from "../pki/mod.ts";
import { drain, freePort, waitFor } from "../dev/testing.ts";
import type { Figure } from "./runtime_bench.ts";
import { mib, type ProcMem, procMem } from "./proc.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * One flag set; `codeCache: false` runs with `--no-code-cache`; `warmFlags`
 * warms the cache with other flags than it runs with (to see V8 reject it).
 */
export interface HeapCase {
  name: string;
  flags: string[];
  codeCache?: boolean;
  warmFlags?: string[];
  /** false runs the bundle as `deno bundle` wrote it (imager/bundle_compact.ts skipped). */
  compact?: boolean;
}

/** The sets measured for docs/decisions.md ("V8 flags for machined and apid"). */
export const HEAP_CASES: HeapCase[] = [
  { name: "none", flags: [] },
  { name: "no-code-cache", flags: [], codeCache: false },
  { name: "uncompacted", flags: [], compact: false },
  { name: "semi1", flags: ["--max-semi-space-size=1"] },
  { name: "semi2", flags: ["--max-semi-space-size=2"] },
  { name: "semi4", flags: ["--max-semi-space-size=4"] },
  { name: "old64", flags: ["--max-old-space-size=64"] },
  { name: "size", flags: ["--optimize-for-size"] },
  { name: "stgc", flags: ["--single-threaded-gc"] },
  { name: "lazy", flags: ["--max-lazy"] },
  { name: "lite", flags: ["--lite-mode"] },
  { name: "jitless", flags: ["--jitless"] },
  { name: "size-warmed-without", flags: ["--optimize-for-size"], warmFlags: [] },
  { name: "semi2-warmed-without", flags: ["--max-semi-space-size=2"], warmFlags: [] },
];

/** Median of three readings 2 s apart, by Pss. */
async function settledMem(pid: number): Promise<ProcMem> {
  const got: ProcMem[] = [];
  for (let i = 0; i < 3; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 2000));
    got.push(await procMem(pid));
  }
  return got.sort((a, b) => a.pssKiB - b.pssKiB)[1];
}

/** machined bundled as the image ships it, and as `deno bundle` wrote it. */
interface Bundles {
  machined: string;
  uncompacted: string;
}

/** Bundles machined, with the native addon beside the bundle where it looks for it. */
async function prepare(dir: string): Promise<Bundles> {
  const at = join(dir, "api", "apid");
  await Deno.mkdir(at, { recursive: true });
  const entry = join(ROOT, "main.ts");
  const machined = await bundleProgram(entry, join(at, "machined.js"));
  const uncompacted = await bundleProgram(entry, join(at, "uncompacted.js"), undefined, false);
  await Deno.writeTextFile(join(dir, "deno.json"), "{}\n");
  await Deno.copyFile(
    join(ROOT, "native-ops/machined_native_ops.node"),
    join(at, "machined_native_ops.node"),
  );
  return { machined, uncompacted };
}

async function cacheArgs(c: HeapCase, program: string, denoDir: string): Promise<string[]> {
  if (c.codeCache === false) return ["--no-code-cache"];
  const v8Flags = c.warmFlags ?? c.flags;
  await warmDenoDir({ deno: Deno.execPath(), program, nodePath: program, denoDir, v8Flags });
  return [];
}

async function calls(stateDir: string, port: number): Promise<void> {
  const creds = resolveCredentials(await readClientConfig(join(stateDir, "machinectl.yaml")));
  const client = createMachineClient({ ...creds, endpoint: `127.0.0.1:${port}` });
  try {
    for (let i = 0; i < 10; i++) {
      await client.api.version({});
      await client.api.serviceList({});
      await client.api.list({ type: "machinestatus" }).catch(() => {});
      await client.api.controllerGraph({}).catch(() => {});
    }
  } finally {
    client.close();
  }
}

/** One case: machined's settled memory. */
export async function measureCase(
  dir: string,
  bundles: Bundles,
  c: HeapCase,
): Promise<{ machined: ProcMem }> {
  const caseDir = await Deno.makeTempDir({ dir, prefix: `${c.name}-` });
  const stateDir = join(caseDir, "state");
  const devPort = freePort();
  const program = c.compact === false ? bundles.uncompacted : bundles.machined;
  const extraM = [
    ...await cacheArgs(c, program, join(caseDir, "deno-m")),
    ...v8FlagsArgs(c.flags),
  ];
  const dev = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", "--no-lock", ...extraM, program, "dev"]
      .concat(["--state", stateDir, "--listen", `127.0.0.1:${devPort}`]),
    // The bundle sits away from the workspace, so it is told where the edge was built.
    env: { DENO_DIR: join(caseDir, "deno-m"), NO_COLOR: "1", MACHINED_EDGE_BIN: edgeBinaryPath() },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const out = drain(dev.stdout);
  drain(dev.stderr);
  try {
    await waitFor(
      "dev node up",
      120_000,
      () => Promise.resolve(out.text.includes("is up") || undefined),
    );
    await calls(stateDir, devPort);
    await calls(stateDir, devPort);
    await new Promise((r) => setTimeout(r, 10_000));
    return { machined: await settledMem(dev.pid) };
  } finally {
    try {
      dev.kill("SIGTERM");
    } catch { /* already gone */ }
    await dev.status;
  }
}

/** Every case in `cases`, one figure per process and measure. */
export async function heapFlags(cases = HEAP_CASES): Promise<Figure[]> {
  const dir = await Deno.makeTempDir({ prefix: "machined-heap-" });
  const figures: Figure[] = [];
  try {
    const bundles = await prepare(dir);
    for (const c of cases) {
      const m = await measureCase(dir, bundles, c);
      for (const [proc, v] of Object.entries(m)) {
        const flags = c.flags.join(" ") + (c.codeCache === false ? " --no-code-cache" : "");
        figures.push({
          name: `heap.${c.name}.${proc}.pss`,
          value: mib(v.pssKiB),
          unit: "MiB",
          flags,
        });
        figures.push({ name: `heap.${c.name}.${proc}.rss`, value: mib(v.rssKiB), unit: "MiB" });
        figures.push({ name: `heap.${c.name}.${proc}.anon`, value: mib(v.anonKiB), unit: "MiB" });
      }
      console.error(`heap ${c.name}: ${JSON.stringify(m)}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  return figures;
}

if (import.meta.main) {
  // `name` picks a case of HEAP_CASES; `name=--flag,--flag` defines one.
  const cases = Deno.args.length === 0 ? HEAP_CASES : Deno.args.map((a): HeapCase => {
    const at = a.indexOf("=");
    if (at < 0) {
      const known = HEAP_CASES.find((c) => c.name === a);
      if (!known) throw new Error(`unknown case ${a}`);
      return known;
    }
    const [name, flags] = [a.slice(0, at), a.slice(at + 1)];
    const list = flags.split(",").filter(Boolean);
    const noCache = list.includes("--no-code-cache");
    return { name, flags: list.filter((f) => f !== "--no-code-cache"), codeCache: !noCache };
  });
  for (const f of await heapFlags(cases)) console.log(JSON.stringify(f));
}
