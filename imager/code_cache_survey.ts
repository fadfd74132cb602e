/**
 * `deno task cache:survey [--program main.js] [--runs 8]`: warms machined's
 * bundle (built from main.ts unless `--program` names one) `--runs` times
 * under machined's V8 flags, each in a fresh DENO_DIR, and writes the
 * specifiers of Deno's own modules whose code cache entry was byte-identical
 * in every run to imager/generated/deno_ext_code_cache.json, the list images
 * ship those entries from (code_cache_ext.ts). Run it after changing Deno's
 * pin, machined's V8 flags or the node: modules the bundle imports.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { MACHINED_V8_FLAGS } from "../layout/mod.ts";
import { DENO_CACHE_TABLES, warmOnce } from "./code_cache.ts";
import { type CacheEntry, identicalInAll, type StableExtSurvey } from "./code_cache_ext.ts";
import { last, parseArgs } from "./cli_args.ts";
import { bundleProgram } from "./program.ts";

const OUT = new URL("./generated/deno_ext_code_cache.json", import.meta.url);
const MAIN = new URL("../main.ts", import.meta.url);

/** Warms `program` `runs` times and returns the survey. */
export async function surveyExtEntries(program: string, runs: number): Promise<StableExtSurvey> {
  const tables: CacheEntry[][] = [];
  for (let i = 0; i < runs; i++) {
    const dir = await Deno.makeTempDir({ prefix: "cache-survey-" });
    try {
      await warmOnce([Deno.execPath()], pathToFileURL(program).href, dir, MACHINED_V8_FLAGS);
      tables.push(readEntries(`${dir}/v8_code_cache_v2`));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  return {
    deno: Deno.version.deno,
    arch: Deno.build.arch,
    v8Flags: [...MACHINED_V8_FLAGS],
    runs,
    specifiers: identicalInAll(tables),
  };
}

function readEntries(path: string): CacheEntry[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(`SELECT specifier, data FROM ${DENO_CACHE_TABLES.v8_code_cache_v2}`)
      .all() as unknown as CacheEntry[];
  } finally {
    db.close();
  }
}

async function main(args: string[]): Promise<void> {
  const a = parseArgs(args, { flags: [], options: ["program", "runs"] });
  const runs = Number(last(a, "runs") ?? "8");
  if (!Number.isInteger(runs) || runs < 2) throw new RangeError(`--runs must be 2 or more`);
  const work = await Deno.makeTempDir({ prefix: "cache-survey-program-" });
  try {
    const program = last(a, "program") ??
      await bundleProgram(MAIN.pathname, `${work}/main.js`);
    const survey = await surveyExtEntries(program, runs);
    await Deno.writeTextFile(OUT, JSON.stringify(survey, null, 2) + "\n");
    console.log(
      `${survey.specifiers.length} entries the same in ${runs} runs ` +
        `(Deno ${survey.deno}, ${survey.arch}) -> ${OUT.pathname}`,
    );
  } finally {
    await Deno.remove(work, { recursive: true });
  }
}

if (import.meta.main) await main(Deno.args);
