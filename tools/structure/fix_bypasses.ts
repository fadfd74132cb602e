/**
 * Rewrites the imports `deno task structure` reports as bypasses so that they enter the
 * target room through its `mod.ts`. It exists for merges: a branch that still imports a
 * room's inner file (or conflicts on such an import line) is brought in line by one run,
 * instead of by hand. It only changes specifiers; a name the target's `mod.ts` does not
 * export yet shows up in `deno check` and is exported there (or, for test-only helpers, from
 * the room's `testing.ts`) by hand, since what a room offers is a decision.
 *
 * Usage: `deno run -A tools/structure/fix_bypasses.ts [--root DIR] [--dry-run]`
 */
import { posix } from "node:path";
import { readGraph } from "./graph.ts";
import { roomOf } from "./rooms.ts";
import { bypassesOf } from "./surfaces.ts";

/** What a run changed, and the bypasses it could not fix (the target room has no entry). */
export interface FixReport {
  rewritten: Array<{ file: string; from: string; to: string }>;
  unfixable: Array<{ file: string; target: string }>;
}

const SPECIFIER = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\2/g;

/** Rewrites every bypass under `root` to import the target room's entry. */
export async function fixBypasses(
  root: string,
  opts: { dryRun?: boolean } = {},
): Promise<FixReport> {
  const graph = await readGraph(root, { withTests: true });
  const report: FixReport = { rewritten: [], unfixable: [] };
  const targets = new Map<string, Map<string, string>>();
  for (const e of bypassesOf(graph)) {
    const room = roomOf(e.to);
    const entry = room === "main" ? "main.ts" : `${room}/mod.ts`;
    if (!graph.files.includes(entry)) {
      report.unfixable.push({ file: e.from, target: e.to });
      continue;
    }
    targets.set(e.from, (targets.get(e.from) ?? new Map()).set(e.to, entry));
  }
  for (const [file, map] of targets) {
    const dir = posix.dirname(file);
    const text = graph.texts.get(file)!;
    const out = text.replace(SPECIFIER, (all, pre: string, q: string, spec: string) => {
      const entry = map.get(posix.normalize(posix.join(dir, spec)));
      if (entry === undefined) return all;
      const rel = posix.relative(dir, entry);
      const to = rel.startsWith(".") ? rel : `./${rel}`;
      report.rewritten.push({ file, from: spec, to });
      return `${pre}${q}${to}${q}`;
    });
    if (out !== text && !opts.dryRun) await Deno.writeTextFile(posix.join(root, file), out);
  }
  return report;
}

if (import.meta.main) {
  const at = Deno.args.indexOf("--root");
  const root = at >= 0 ? Deno.args[at + 1] : Deno.cwd();
  const r = await fixBypasses(root, { dryRun: Deno.args.includes("--dry-run") });
  for (const w of r.rewritten) console.log(`${w.file}: ${w.from} -> ${w.to}`);
  for (const u of r.unfixable) console.log(`cannot fix ${u.file} -> ${u.target}: no mod.ts`);
  console.log(`${r.rewritten.length} imports rewritten; run deno check for names to export`);
  Deno.exit(r.unfixable.length > 0 ? 1 : 0);
}
