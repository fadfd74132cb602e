/**
 * The committed api/gen matches the protos and `buf lint` passes. Runs buf
 * (from the npm cache) into a temp copy, so the working tree is untouched, the
 * same way `deno task gen` does (api/gen.ts: the running Deno goes first on
 * buf's PATH, so this passes where deno is not on PATH).
 */
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";
import { runBuf } from "./gen.ts";

const API = new URL(".", import.meta.url).pathname;

async function readTree(dir: string, base = dir, out = new Map<string, string>()) {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) await readTree(p, base, out);
    else out.set(p.slice(base.length), await Deno.readTextFile(p));
  }
  return out;
}

Deno.test({
  name: "buf lint passes and api/gen is what `deno task gen` produces",
  sanitizeResources: false,
  fn: async () => {
    const tmp = await Deno.makeTempDir({ prefix: "api-gen-" });
    try {
      for (const f of ["buf.yaml", "buf.gen.yaml"]) await Deno.copyFile(join(API, f), join(tmp, f));
      await new Deno.Command("cp", { args: ["-r", join(API, "proto"), tmp] }).output();
      await Deno.copyFile(join(API, "..", "deno.json"), join(tmp, "deno.json"));
      const lint = await runBuf(["lint"], tmp);
      deepEqual(lint.code, 0, lint.text);
      const gen = await runBuf(["generate"], tmp);
      deepEqual(gen.code, 0, gen.text);
      const want = await readTree(join(tmp, "gen"));
      const have = await readTree(join(API, "gen"));
      deepEqual([...have.keys()].sort(), [...want.keys()].sort());
      for (const [k, v] of want) {
        deepEqual(have.get(k), v, `api/gen${k} is stale: run deno task gen`);
      }
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
