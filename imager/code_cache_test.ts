import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { DENO_CACHE_TABLES, hasTable, warmDenoDir } from "./code_cache.ts";

Deno.test("warmDenoDir caches a program under its node path, with no side effects and no WAL", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-warm-" });
  try {
    const program = `${root}/prog/main.js`;
    await Deno.mkdir(`${root}/prog`);
    // Runs only as the main module, like machined's bundle.
    await Deno.writeTextFile(
      program,
      `import { join } from "node:path";\nexport const f = (a) => join(a, "x");\n` +
        `if (import.meta.main) await Deno.writeTextFile(${
          JSON.stringify(`${root}/ran`)
        }, "side effect");\n`,
    );
    const r = await warmDenoDir({
      deno: Deno.execPath(),
      program,
      nodePath: "/machined/main.js",
      denoDir: `${root}/cache`,
    });
    assert.equal(r.programCached, true);
    assert.ok(r.codeCacheEntries >= 1);
    assert.ok(r.bytes > 0);
    await assert.rejects(Deno.stat(`${root}/ran`), Deno.errors.NotFound);
    const names = [];
    for await (const e of Deno.readDir(r.denoDir)) names.push(e.name);
    assert.deepEqual(names.filter((n) => !(n in DENO_CACHE_TABLES)), []);
    const db = new DatabaseSync(`${r.denoDir}/v8_code_cache_v2`);
    try {
      const specs = (db.prepare(`SELECT specifier FROM ${DENO_CACHE_TABLES.v8_code_cache_v2}`)
        .all() as Array<{ specifier: string }>).map((x) => x.specifier);
      assert.ok(specs.includes("file:///machined/main.js"));
      // Deno discards a cache file whose `info` does not name its version.
      const info = db.prepare("SELECT value FROM info WHERE key = 'CLI_VERSION'").get() as {
        value: string;
      };
      assert.equal(info.value, Deno.version.deno);
      assert.equal(specs.filter((s) => s.startsWith(`file://${root}`)).length, 0);
    } finally {
      db.close();
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("warmDenoDir is reproducible: the same program gives the same cache bytes", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-warm-repro-" });
  try {
    const program = `${root}/main.js`;
    await Deno.writeTextFile(
      program,
      `import { join } from "node:path";\nimport http2 from "node:http2";\n` +
        `export const f = (a) => join(a, String(typeof http2));\n`,
    );
    const hashes: string[][] = [];
    for (const out of ["one", "two"]) {
      const r = await warmDenoDir({
        deno: Deno.execPath(),
        program,
        nodePath: "/machined/main.js",
        denoDir: `${root}/${out}`,
      });
      assert.equal(r.programCached, true, "the program's own entry is stable and kept");
      const files: string[] = [];
      for await (const e of Deno.readDir(r.denoDir)) files.push(e.name);
      hashes.push(
        await Promise.all(
          files.sort().map(async (f) => {
            const d = await crypto.subtle.digest(
              "SHA-256",
              await Deno.readFile(`${r.denoDir}/${f}`),
            );
            return `${f}:${Array.from(new Uint8Array(d), (b) => b.toString(16)).join("")}`;
          }),
        ),
      );
    }
    assert.deepEqual(hashes[0], hashes[1]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("warmDenoDir warms under the node's V8 flags: V8 stamps those that change code in the entry", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-warm-flags-" });
  try {
    const program = `${root}/main.js`;
    await Deno.writeTextFile(program, `export const f = (a) => a + 1;\n`);
    const entry = async (out: string, v8Flags: string[]) => {
      const r = await warmDenoDir({
        deno: Deno.execPath(),
        program,
        nodePath: "/machined/main.js",
        denoDir: `${root}/${out}`,
        v8Flags,
      });
      assert.equal(r.programCached, true);
      const db = new DatabaseSync(`${r.denoDir}/v8_code_cache_v2`);
      try {
        const row = db.prepare(
          `SELECT data FROM ${DENO_CACHE_TABLES.v8_code_cache_v2} WHERE specifier = ?`,
        ).get("file:///machined/main.js") as { data: Uint8Array };
        return row.data;
      } finally {
        db.close();
      }
    };
    const plain = await entry("plain", []);
    // --optimize-for-size changes code, so V8 hashes it; heap-sizing flags such as
    // --max-semi-space-size give the same bytes (measured), so either way is safe.
    const flagged = await entry("flagged", ["--optimize-for-size"]);
    assert.equal(plain.length, flagged.length);
    assert.notDeepEqual(flagged, plain, "the entry records the flags it was made under");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("hasTable: a cache file Deno opened but left without its table counts as absent", async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-has-table-" });
  try {
    const file = `${root}/node_analysis_cache_v2`;
    assert.equal(hasTable(file, "cjsanalysiscache"), false, "no file");
    const db = new DatabaseSync(file);
    db.exec("CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    db.close();
    assert.equal(hasTable(file, "cjsanalysiscache"), false, "file without the table");
    assert.equal(hasTable(file, "info"), true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
