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
 * The entries are not byte-reproducible (V8 output varies between runs);
 * `buildImage({ codeCache: false })` gives byte-identical images.
 */
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
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
  /** Host path of the bundled program. */
  program: string;
  /** Absolute path the program has on the node, e.g. "/machined/main.js". */
  nodePath: string;
  /** Staging DENO_DIR to (re)create. */
  denoDir: string;
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
  const hostUrl = toFileUrl(await Deno.realPath(o.program));
  const nodeUrl = toFileUrl(o.nodePath);
  // The importer is not the main module of the bundle, so `import.meta.main`
  // stays false and the program only evaluates its modules. The process must
  // end by itself (no Deno.exit): Deno writes a code cache after evaluation.
  const warmer = `${denoDir}/.warm.mjs`;
  await Deno.writeTextFile(warmer, `import ${JSON.stringify(hostUrl)};\n`);
  try {
    await run(o.deno, ["run", "-A", "--no-config", "--no-lock", warmer], {
      env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1", DENO_NO_PROMPT: "1", NO_COLOR: "1" },
      clearEnv: true,
    });
  } finally {
    await Deno.remove(warmer).catch(() => {});
  }
  // Only the caches ship: the rest (npm/, node_compat_bin/ with a link to the
  // host's deno) is recreated by Deno on the node when it needs it.
  for await (const e of Deno.readDir(denoDir)) {
    if (!(e.name.replace(/-(wal|shm)$/, "") in DENO_CACHE_TABLES)) {
      await Deno.remove(`${denoDir}/${e.name}`, { recursive: true });
    }
  }
  const warmerUrl = toFileUrl(warmer);
  let codeCacheEntries = 0;
  let programCached = false;
  for (const [file, table] of Object.entries(DENO_CACHE_TABLES)) {
    const path = `${denoDir}/${file}`;
    if (!(await exists(path))) continue;
    const counts = renameRows(path, table, { from: hostUrl, to: nodeUrl, drop: warmerUrl });
    if (table === "codecache") [codeCacheEntries, programCached] = [counts.rows, counts.renamed];
  }
  return { denoDir, codeCacheEntries, programCached, bytes: await treeSize(denoDir) };
}

/**
 * In one cache database: rename the rows of specifier `from` to `to`, drop
 * those of `drop`, fold the write-ahead log into the file and compact it, so
 * one self-contained file ships.
 */
function renameRows(
  path: string,
  table: string,
  s: { from: string; to: string; drop: string },
): { rows: number; renamed: boolean } {
  const db = new DatabaseSync(path);
  try {
    db.prepare(`DELETE FROM ${table} WHERE specifier = ? OR specifier = ?`).run(s.drop, s.to);
    const renamed = db.prepare(`UPDATE ${table} SET specifier = ? WHERE specifier = ?`)
      .run(s.to, s.from).changes;
    const rows = db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
    db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE; VACUUM;");
    return { rows: Number(rows.n), renamed: Number(renamed) > 0 };
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

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

function toFileUrl(path: string): string {
  return pathToFileURL(path).href;
}
