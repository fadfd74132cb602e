/**
 * The import graph of the TypeScript tree, drawn from the source text alone (no type
 * checker), so `deno task structure` runs in a second and on any checkout.
 */
import { posix } from "node:path";

/** One import between two repository files; `typeOnly` imports carry no value at run time. */
export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The files scanned and the imports between them. */
export interface ImportGraph {
  files: string[];
  edges: Edge[];
}

/** Generated code is never hand-edited and is not part of the structure. */
export const GENERATED = [/^api\/gen\//, /^cri\/gen\//, /(^|\/)target\//, /^build\//];

/** Whether a path is a test file (`*_test.ts`); test support (`testing.ts`) is kept. */
export function isTest(path: string): boolean {
  return /_test\.ts$/.test(path);
}

/**
 * Whether a path is code that only tests run: harnesses (bench/, e2e/), fixtures
 * (testdata/), test support (`testing.ts`, `testing_*.ts`, `*_testing.ts`) and the shared
 * suites backends must pass (`*_conformance.ts`, `*_suite.ts`). The rest is production code,
 * which the function-size rule (tools/structure/structure_test.ts) holds to 80 lines.
 */
export function isTestSupport(path: string): boolean {
  return /^(bench|e2e)\//.test(path) || /(^|\/)testdata\//.test(path) ||
    /(^|\/|_)testing(_\w+)?\.ts$/.test(path) || /_(conformance|suite)\.ts$/.test(path);
}

const STATEMENT =
  /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*["'](\.{1,2}\/[^"']+)["']/g;
const BARE = /(?:^|[;\n])\s*import\s+["'](\.{1,2}\/[^"']+)["']/g;
const DYNAMIC = /\bimport\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** Strips comments so that an import named in a comment is not an edge. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Whether `import { type A, type B }` (every named binding typed) carries no value. */
function allTyped(clause: string): boolean {
  const m = clause.match(/^\{([\s\S]*)\}$/);
  if (m === null) return false;
  const names = m[1].split(",").map((s) => s.trim()).filter((s) => s !== "");
  return names.length > 0 && names.every((n) => n.startsWith("type "));
}

/** The imports written in one file, resolved to repository paths. */
export function importsOf(file: string, text: string): Edge[] {
  const dir = posix.dirname(file);
  const edges: Edge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    const to = posix.normalize(posix.join(dir, spec));
    if (to.endsWith(".ts")) edges.push({ from: file, to, typeOnly });
  };
  const src = stripComments(text);
  for (const m of src.matchAll(STATEMENT)) {
    add(m[4], m[2] !== undefined || allTyped(m[3].trim()));
  }
  for (const m of src.matchAll(BARE)) add(m[1], false);
  for (const m of src.matchAll(DYNAMIC)) add(m[1], false);
  return edges;
}

/**
 * The tree's TypeScript files as git sees them (tracked, and untracked but
 * not ignored), relative to `root`: what .gitignore leaves out (build/,
 * target/, .state/) is never read.
 */
export async function listTs(root: string): Promise<string[]> {
  const out = await new Deno.Command("git", {
    args: ["-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.ts"],
  }).output();
  if (!out.success) throw new Error(`git ls-files failed in ${root}`);
  return new TextDecoder().decode(out.stdout).split("\n").filter((f) => f !== "");
}

/** Reads the tree at `root`; tests are left out unless `withTests`. */
export async function readGraph(
  root: string,
  opts: { withTests?: boolean } = {},
): Promise<ImportGraph & { texts: Map<string, string> }> {
  const files = (await listTs(root)).filter((f) =>
    !GENERATED.some((g) => g.test(f)) && (opts.withTests || !isTest(f))
  );
  const known = new Set(files);
  const texts = new Map<string, string>();
  const edges: Edge[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(posix.join(root, file));
    } catch {
      continue;
    }
    texts.set(file, text);
    edges.push(...importsOf(file, text).filter((e) => known.has(e.to)));
  }
  return { files: files.filter((f) => texts.has(f)), edges, texts };
}
