/**
 * What evaluating a part of machined costs the V8 heap: each entry is bundled
 * alone (`deno bundle`, as the image is), imported by a fresh Deno without
 * running it (`import.meta.main` stays false), then two full GCs, then
 * `Deno.memoryUsage().heapUsed`, minus the same for an empty module. Shared
 * dependencies count in every entry that pulls them, so the figures say what
 * loading a subtree lazily can save at most. Numbers: docs/decisions.md,
 * "Rarely used code loads lazily". Run: `deno run -A bench/module_heap.ts
 * [entry.ts | bundle.js ...]` (.ts relative to the repository; a .js is taken
 * as already bundled).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleProgram } from "../imager/mod.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The subtrees measured by default. */
export const ENTRIES = [
  "main.ts",
  "boot/node_main.ts",
  "dev/dev_mode.ts",
  "api/edge/mod.ts",
  "reset/mod.ts",
  "api/host/maintenance_api.ts",
  "metrics/mod.ts",
  "observe/mod.ts",
  "config/mod.ts",
  "pki/mod.ts",
  "cri/cri_client.ts",
];

/** heapUsed (bytes) after importing `file` in a fresh process, after two full GCs. */
export async function heapAfterImport(file: string, denoDir: string): Promise<number> {
  const probe = `${file}.probe.mjs`;
  await Deno.writeTextFile(
    probe,
    `import ${JSON.stringify(`file://${file}`)};\n` +
      "globalThis.gc(); globalThis.gc();\n" +
      "console.log(Deno.memoryUsage().heapUsed);\n",
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", "--no-lock", "--no-code-cache", "--v8-flags=--expose-gc"]
      .concat([probe]),
    env: { DENO_DIR: denoDir, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`importing ${file} failed (${out.code})`);
  return Number(new TextDecoder().decode(out.stdout).trim().split("\n").pop());
}

/** Median of `n` runs, in bytes. */
async function median(file: string, denoDir: string, n = 3): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await heapAfterImport(file, denoDir));
  return xs.sort((a, b) => a - b)[Math.floor(n / 2)];
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "machined-module-heap-" });
  try {
    const denoDir = join(dir, "deno");
    const empty = join(dir, "empty.mjs");
    await Deno.writeTextFile(empty, "export {};\n");
    const base = await median(empty, denoDir);
    for (const entry of Deno.args.length > 0 ? Deno.args : ENTRIES) {
      // A .js file is taken as already bundled (e.g. the bundle before a change).
      const out = entry.endsWith(".js") ? entry : join(dir, `${entry.replaceAll("/", "_")}.js`);
      if (out !== entry) await bundleProgram(join(ROOT, entry), out);
      const bytes = (await Deno.stat(out)).size;
      const heap = await median(out, denoDir) - base;
      console.log(JSON.stringify({
        entry,
        bundleKiB: Math.round(bytes / 1024),
        heapMiB: +(heap / 1048576).toFixed(2),
      }));
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
