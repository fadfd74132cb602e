/**
 * The privileged test tier, one `deno test` process per module.
 *
 * Why not one `deno test` over every `*_root_test.ts`: those modules run the
 * native process backend, whose reaper is the one owner of waitid(2) for the
 * whole process (PID 1's design). Once a module has spawned through it, the
 * reaper waits for every child of the test process while any lives, so a
 * later module's `Deno.Command` can lose its child's exit to it (ECHILD):
 * CI's root tier failed 13 tests that way (2026-12-07) in modules that had
 * nothing wrong with them. A process per module keeps each module's children
 * its own. docs/decisions.md, "The root tier runs each module in its own process".
 *
 * Run: `deno task test:root [filter ...]` (a filter keeps the modules whose
 * path contains it).
 * @module
 */
import { listTs } from "../structure/mod.ts";
import { fileURLToPath } from "node:url";

/**
 * Every `*_root_test.ts` of the tree, sorted, relative to `root`: the files
 * git tracks or would track, so nothing under an ignored directory (build/,
 * target/, .state/: copies and generated trees) is run.
 */
export async function findRootTests(root: string): Promise<string[]> {
  return (await listTs(root)).filter((f) => f.endsWith("_root_test.ts")).sort();
}

/** The modules `filters` keep: all when there is none, else those naming one. */
export function selectModules(modules: string[], filters: string[]): string[] {
  if (filters.length === 0) return modules;
  return modules.filter((m) => filters.some((f) => m.includes(f)));
}

/**
 * Runs each module in its own `deno test -A`; resolves to the modules that
 * failed. `output: "null"` keeps a child's summary line out of the caller's
 * log (CI's tally counts every summary line it sees).
 */
export async function runEach(
  modules: string[],
  cwd: string,
  output: "inherit" | "null" = "inherit",
): Promise<string[]> {
  const failed: string[] = [];
  for (const m of modules) {
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: ["test", "-A", m],
      cwd,
      stdin: "null",
      stdout: output,
      stderr: output,
    }).spawn().status;
    if (code !== 0) failed.push(m);
  }
  return failed;
}

if (import.meta.main) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const modules = selectModules(await findRootTests(root), Deno.args);
  const failed = await runEach(modules, root);
  console.log(`root tier: ${modules.length} modules, ${failed.length} failed`);
  for (const m of failed) console.log(`  failed: ${m}`);
  Deno.exit(failed.length === 0 ? 0 : 1);
}
