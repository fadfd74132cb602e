import assert from "node:assert/strict";
import { warmDenoDirStored, warmKey } from "./code_cache_store.ts";

async function filesOf(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(dir)) {
    const bytes = await Deno.readFile(`${dir}/${e.name}`);
    out[e.name] = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)))
      .map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return out;
}

Deno.test("a stored warm is reused for the same inputs, with the same bytes; a changed program warms again", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-warm-store-" });
  try {
    const program = `${root}/main.js`;
    await Deno.writeTextFile(program, `export const f = (a) => a + 1;\n`);
    const o = { deno: Deno.execPath(), program, nodePath: "/machined/main.js" };
    const store = `${root}/store`;
    const first = await warmDenoDirStored({ ...o, denoDir: `${root}/one` }, store);
    assert.equal(first.reused, false);
    assert.equal(first.programCached, true);
    const second = await warmDenoDirStored({ ...o, denoDir: `${root}/two` }, store);
    assert.equal(second.reused, true);
    assert.deepEqual(
      [second.codeCacheEntries, second.programCached, second.bytes],
      [first.codeCacheEntries, first.programCached, first.bytes],
    );
    assert.deepEqual(await filesOf(`${root}/two`), await filesOf(`${root}/one`));
    assert.equal(second.denoDir, await Deno.realPath(`${root}/two`));

    // Another input is another key: flags, node path, program bytes.
    const k = await warmKey({ ...o, denoDir: "" });
    assert.notEqual(await warmKey({ ...o, denoDir: "", v8Flags: ["--max-semi-space-size=2"] }), k);
    assert.notEqual(await warmKey({ ...o, denoDir: "", nodePath: "/other.js" }), k);
    await Deno.writeTextFile(program, `export const f = (a) => a + 2;\n`);
    assert.notEqual(await warmKey({ ...o, denoDir: "" }), k);
    const third = await warmDenoDirStored({ ...o, denoDir: `${root}/three` }, store);
    assert.equal(third.reused, false);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a store entry without its result is warmed again, not trusted", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-warm-store-" });
  try {
    const program = `${root}/main.js`;
    await Deno.writeTextFile(program, `export const g = 1;\n`);
    const o = { deno: Deno.execPath(), program, nodePath: "/machined/main.js" };
    const store = `${root}/store`;
    const key = await warmKey({ ...o, denoDir: "" });
    await Deno.mkdir(`${store}/${key}/deno`, { recursive: true });
    await Deno.writeTextFile(`${store}/${key}/result.json`, "{not json");
    const r = await warmDenoDirStored({ ...o, denoDir: `${root}/one` }, store);
    assert.equal(r.reused, false);
    assert.equal(r.programCached, true);
    assert.equal((await warmDenoDirStored({ ...o, denoDir: `${root}/two` }, store)).reused, true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
