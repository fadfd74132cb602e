/**
 * The committed api/gen matches the protos and `buf lint` passes. Runs buf
 * (from the npm cache) into a temp copy, so the working tree is untouched.
 */
import { deepEqual } from "node:assert/strict";
import { join } from "node:path";

const API = new URL(".", import.meta.url).pathname;
const BUF = ["run", "-A", "npm:@bufbuild/buf@1.75.0"];

async function run(args: string[], cwd: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return {
    code: out.code,
    text: new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr),
  };
}

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
      const lint = await run([...BUF, "lint"], tmp);
      deepEqual(lint.code, 0, lint.text);
      const gen = await run([...BUF, "generate"], tmp);
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
