/**
 * Which of Deno's own modules (`ext:` and `node:` specifiers) may ship a V8
 * code cache entry in an image. Deno compiles them on the node unless the
 * image carries their entries; carrying them took 0.4–0.5 s off Deno's start
 * under TCG (docs/decisions.md, "Deno's own modules' code cache ships, from a
 * surveyed list"). About a third of those entries differ from run to run in
 * a few bytes (a value V8 fills in while the modules evaluate), so "both warm
 * runs agree" alone would let one through by chance now and then, and the
 * same inputs would no longer give the same image. The list below was made by
 * warming the bundle many times (`deno task cache:survey`) and keeping the
 * specifiers whose entry was the same every time; it holds for the Deno
 * version, architecture and V8 flags it names, and for any other the image
 * ships the program's entry alone.
 *
 * @module
 */
import surveyed from "./generated/deno_ext_code_cache.json" with { type: "json" };

/** The survey's result, as `deno task cache:survey` writes it. */
export interface StableExtSurvey {
  /** Deno's version (`2.9.3`), as Deno's caches record it in their `info` table. */
  deno: string;
  /** Deno's architecture (`x86_64`, `aarch64`): V8's cache is specific to it. */
  arch: string;
  /** The V8 flags the survey warmed under (machined's, layout/v8_flags.ts). */
  v8Flags: string[];
  /** How many warm runs agreed on every listed entry. */
  runs: number;
  /** Specifiers whose entry was byte-identical in every run, sorted. */
  specifiers: string[];
}

/** The committed survey (imager/generated/deno_ext_code_cache.json). */
export const STABLE_EXT_SURVEY: StableExtSurvey = surveyed;

/** What a warm may ship beside the program: the listed specifiers, for one Deno version. */
export interface StableExt {
  /** The Deno version the list holds for; a warm by another Deno ships none of them. */
  deno: string;
  specifiers: ReadonlySet<string>;
}

/**
 * The surveyed entries for a Deno on `arch` (Deno.build.arch's names) running
 * under `v8Flags`, or undefined when the survey was made for another
 * architecture or other flags: the image then ships the program's entry alone.
 */
export function stableExtFor(
  arch: string,
  v8Flags: readonly string[],
  survey: StableExtSurvey = STABLE_EXT_SURVEY,
): StableExt | undefined {
  if (survey.arch !== arch) return undefined;
  if (survey.v8Flags.join(",") !== v8Flags.join(",")) return undefined;
  return { deno: survey.deno, specifiers: new Set(survey.specifiers) };
}

/** One row of Deno's code cache table, as far as the survey reads it. */
export interface CacheEntry {
  specifier: string;
  data: Uint8Array;
}

/**
 * The specifiers of Deno's own modules (`ext:`, `node:`) whose entry is
 * byte-identical in every run and present in all of them, sorted. Pure.
 */
export function identicalInAll(runs: ReadonlyArray<ReadonlyArray<CacheEntry>>): string[] {
  if (runs.length === 0) return [];
  const maps = runs.map((rows) => new Map(rows.map((r) => [r.specifier, r.data])));
  const same = (a: Uint8Array, b: Uint8Array | undefined) =>
    b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
  return [...maps[0]]
    .filter(([s]) => s.startsWith("ext:") || s.startsWith("node:"))
    .filter(([s, data]) => maps.every((m) => same(data, m.get(s))))
    .map(([s]) => s)
    .sort();
}
