/**
 * Pre-warmed Deno caches for a bundled program, so the node's first (and
 * every) boot skips what Deno otherwise does on each cold start: swc's
 * dependency analysis of the bundle, V8's parse and compile of it, and the
 * compile of the lazily loaded `ext:deno_node` modules it uses. Deno 2.9
 * keeps all three in SQLite files under DENO_DIR, keyed by module specifier
 * and a hash of the source (not its mtime). The imager runs the bundle once
 * at build time with a staging DENO_DIR (importing it evaluates every
 * module; nothing runs because the bundle is not the main module), then
 * renames the program's rows from its host path to the path it has on the
 * node, and ships the directory at the node's DENO_DIR.
 *
 * V8 checks its own version and flags when it reads a cache entry and
 * recompiles on a mismatch, so a stale cache costs time, never correctness.
 * Reproducible: V8's entries for Deno's own `ext:` modules vary from run to
 * run (measured: 23 of 158 took 2 to 4 distinct values over 4 runs), and the
 * program's entry records the path it was compiled from. So the program is
 * warmed from a path that depends only on its bytes, twice; only the program's
 * V8 entry ships (when both runs agree), with the dependency and Node analysis
 * caches (when both runs agree), written into fresh databases in a fixed
 * order: the same inputs give the same bytes. Deno's `ext:` modules compile on
 * the node; shipping them too saved only 0.5 s of a 17 s boot under TCG.
 */
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { v8FlagsArgs } from "../layout/mod.ts";
import { run } from "./run.ts";

/** The SQLite files Deno 2.9 keeps per module, and the table holding the rows. */
export const DENO_CACHE_TABLES = {
  v8_code_cache_v2: "codecache",
  dep_analysis_cache_v2: "moduleinfocache",
  node_analysis_cache_v2: "cjsanalysiscache",
} as const;

/** Options of {@link warmDenoDir}. */
export interface WarmOptions {
  /** The Deno binary the node runs (the cache is only valid for the same version). */
  deno: string;
  /**
   * A command prefix that runs `deno` on the build host, e.g.
   * `["/usr/bin/qemu-aarch64", "-L", sysroot]` for another architecture's
   * Deno: V8's code cache is specific to the architecture (an x86_64 Deno's
   * cache gained an aarch64 Deno nothing, docs/imager.md). @default []
   */
  runner?: readonly string[];
  /** Host path of the bundled program. */
  program: string;
  /** Absolute path the program has on the node, e.g. "/machined/main.js". */
  nodePath: string;
  /** Staging DENO_DIR to (re)create. */
  denoDir: string;
  /**
   * The V8 flags the node runs the program with (layout/v8_flags.ts): V8 keys
   * its cache on a hash of the flags and recompiles on a mismatch, so the
   * warm run must use the same ones. @default none
   */
  v8Flags?: readonly string[];
}

/** What was cached. */
export interface WarmResult {
  denoDir: string;
  /** Rows in the V8 code cache (the program and the `ext:` modules it loads). */
  codeCacheEntries: number;
  /** Whether the program itself has a V8 code cache entry under its node path. */
  programCached: boolean;
  /** Total size of the cache files. */
  bytes: number;
}

/**
 * Fill `o.denoDir` with Deno's caches for `o.program` as the node will run it.
 * @throws CommandError when Deno fails to load the program.
 */
export async function warmDenoDir(o: WarmOptions): Promise<WarmResult> {
  await Deno.remove(o.denoDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(o.denoDir, { recursive: true });
  const denoDir = await Deno.realPath(o.denoDir);
  // V8's entry records the script's path: warm from a path that depends only on
  // the program's bytes, so where the image is built does not change the cache.
  const source = await Deno.readFile(o.program);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", source));
  const stable = `/tmp/machined-warm-${Array.from(digest.slice(0, 8), hex).join("")}`;
  // Two builds (or tests) warming the same program share that path: hold it alone.
  const lock = await Deno.open(`${stable}.lock`, { create: true, write: true });
  await lock.lock(true);
  try {
    return await warmAt(o, denoDir, stable, source);
  } finally {
    await lock.unlock();
    lock.close();
  }
}

async function warmAt(
  o: WarmOptions,
  denoDir: string,
  stable: string,
  source: Uint8Array,
): Promise<WarmResult> {
  await Deno.mkdir(stable, { recursive: true });
  const stableProgram = `${stable}/${o.nodePath.split("/").pop()}`;
  await Deno.writeFile(stableProgram, source);
  const hostUrl = toFileUrl(stableProgram);
  const nodeUrl = toFileUrl(o.nodePath);
  const runs = [
    await Deno.makeTempDir({ prefix: "warm-a-" }),
    await Deno.makeTempDir({ prefix: "warm-b-" }),
  ];
  try {
    for (const dir of runs) {
      await warmOnce([...(o.runner ?? []), o.deno], hostUrl, dir, o.v8Flags ?? []);
    }
    let codeCacheEntries = 0;
    let programCached = false;
    for (const [file, table] of Object.entries(DENO_CACHE_TABLES)) {
      const [a, b] = runs.map((dir) => `${dir}/${file}`);
      // Deno opens a cache file before it creates the table, so a run can leave
      // the file without it (CI saw it): skip that cache like an absent one.
      if (!hasTable(a, table) || !hasTable(b, table)) continue;
      const kept = stableRows(readRows(a, table), readRows(b, table), hostUrl, nodeUrl, {
        programOnly: table === "codecache",
      });
      // Deno validates a cache file by its `info` table (the CLI version); keep it.
      writeDatabase(`${denoDir}/${file}`, schemaOf(a), {
        info: readRows(a, "info"),
        [table]: kept,
      });
      if (table === "codecache") {
        codeCacheEntries = kept.length;
        programCached = kept.some((r) => r.specifier === nodeUrl);
      }
    }
    return { denoDir, codeCacheEntries, programCached, bytes: await treeSize(denoDir) };
  } finally {
    for (const dir of [...runs, stable]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}

function hex(b: number): string {
  return b.toString(16).padStart(2, "0");
}

/** One cold run of Deno importing the program, filling `denoDir`'s caches. */
async function warmOnce(
  deno: string[],
  programUrl: string,
  denoDir: string,
  v8Flags: readonly string[],
): Promise<void> {
  // The importer is not the main module of the bundle, so `import.meta.main`
  // stays false and the program only evaluates its modules. The process must
  // end by itself (no Deno.exit): Deno writes a code cache after evaluation.
  const warmer = `${denoDir}/.warm.mjs`;
  await Deno.writeTextFile(warmer, `import ${JSON.stringify(programUrl)};\n`);
  await run(deno[0], [
    ...deno.slice(1),
    "run",
    "-A",
    "--no-config",
    "--no-lock",
    ...v8FlagsArgs(v8Flags),
    warmer,
  ], {
    env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1" },
    clearEnv: true,
  });
}

type Row = Record<string, unknown> & { specifier: string };

function readRows(path: string, table: string): Row[] {
  const db = new DatabaseSync(path);
  try {
    // Hashes are 64-bit: read them as bigints so nothing is rounded.
    const select = db.prepare(`SELECT * FROM ${table}`);
    select.setReadBigInts(true);
    return select.all() as Row[];
  } finally {
    db.close();
  }
}

/**
 * Whether `path` is a SQLite file holding `table`; false when either is
 * missing. Exported for its test.
 */
export function hasTable(path: string, table: string): boolean {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch {
    return false;
  }
  try {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(table) !== undefined;
  } finally {
    db.close();
  }
}

/** The CREATE TABLE statements of a database's own tables, by name. */
function schemaOf(path: string): Map<string, string> {
  const db = new DatabaseSync(path);
  try {
    const rows = db.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    ).all() as Array<{ name: string; sql: string }>;
    return new Map(rows.map((r) => [r.name, r.sql]));
  } finally {
    db.close();
  }
}

/**
 * The rows both runs produced identically (only the program's, with
 * `programOnly`), the program renamed from its host path to its node path and
 * the warmer's own rows dropped, sorted by specifier. Pure.
 */
export function stableRows(
  a: Row[],
  b: Row[],
  hostUrl: string,
  nodeUrl: string,
  options: { programOnly?: boolean } = {},
): Row[] {
  const key = (r: Row) =>
    JSON.stringify(
      r,
      (_k, v) => v instanceof Uint8Array ? [...v] : typeof v === "bigint" ? `${v}n` : v,
    );
  const inB = new Set(b.map(key));
  return a
    .filter((r) => inB.has(key(r)) && !r.specifier.endsWith("/.warm.mjs"))
    .map((r) => r.specifier === hostUrl ? { ...r, specifier: nodeUrl } : r)
    .filter((r) =>
      r.specifier === nodeUrl || (!options.programOnly && !r.specifier.startsWith("file:"))
    )
    .sort((x, y) => (x.specifier < y.specifier ? -1 : x.specifier > y.specifier ? 1 : 0));
}

/**
 * Writes a fresh database with `schema`'s tables, each filled with `rows[table]`
 * in the given order, then compacted: the same rows give the same bytes.
 */
function writeDatabase(
  path: string,
  schema: Map<string, string>,
  rows: Record<string, Row[]>,
): void {
  const db = new DatabaseSync(path);
  try {
    db.exec("PRAGMA journal_mode=DELETE;");
    db.exec("BEGIN");
    for (const [table, sql] of [...schema].sort(([x], [y]) => (x < y ? -1 : 1))) {
      db.exec(sql);
      const list = rows[table] ?? [];
      if (list.length === 0) continue;
      const columns = Object.keys(list[0]);
      const insert = db.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${
          columns.map(() => "?").join(", ")
        })`,
      );
      // deno-lint-ignore no-explicit-any
      for (const r of list) insert.run(...columns.map((c) => r[c] as any));
    }
    db.exec("COMMIT");
    db.exec("VACUUM;");
  } finally {
    db.close();
  }
}

async function treeSize(dir: string): Promise<number> {
  let total = 0;
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) total += await treeSize(p);
    else if (e.isFile) total += (await Deno.stat(p)).size;
  }
  return total;
}

function toFileUrl(path: string): string {
  return pathToFileURL(path).href;
}
