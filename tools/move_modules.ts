/**
 * Moves TypeScript modules by a JSON mapping and rewrites what names them, so a folder
 * restructuring is one reviewable data file instead of hundreds of hand edits.
 *
 * The mapping (for example tools/moves/issue26.json) maps old repository paths to new ones:
 * `"node/api_host.ts": "api/host/api_host.ts"` moves one file, `"node/upgrade/": "upgrade/"`
 * (both ending in `/`) moves every file under a folder. A file entry wins over a folder
 * entry; among folders the longest prefix wins; mappings chain (a→b, b→c gives a→c).
 *
 * What it does, in order:
 * 1. `git mv` every tracked file whose path maps somewhere else (files already moved are
 *    simply absent at the old path, so a rerun moves nothing);
 * 2. rewrites relative specifiers in every `*.ts` file (`import`/`export … from`, dynamic
 *    `import()`, `new URL("…", import.meta.url)`) whose target moved or whose importer
 *    moved, so they point at the new place;
 * 3. rewrites repository paths named in text: Markdown, deno.json, .ci scripts, shell and
 *    Rust files, and non-specifier text of TypeScript files (comments, cwd-relative paths).
 *
 * It is idempotent: on a tree already moved it changes nothing, and on a branch merged
 * later whose new files import old paths it fixes those imports. Lines containing
 * `moves:keep` are never rewritten (for a decision record that names the old paths).
 *
 * Usage: `deno run -A tools/move_modules.ts tools/moves/issue26.json [--root DIR] [--dry-run]`
 */
import { posix } from "node:path";

/** A mapping from old repository paths to new ones; folder entries end in `/`. */
export type MoveMapping = Record<string, string>;

/** What a run changed: the files moved and the files whose text was rewritten. */
export interface MoveReport {
  moved: Array<[string, string]>;
  rewritten: string[];
}

/** A mapping that cannot be applied (a folder mapped to a file, or a chain that loops). */
export class MoveMappingError extends Error {
  constructor(message: string, readonly entry: string) {
    super(`${message}: ${entry}`);
    this.name = "MoveMappingError";
  }
}

const KEEP_MARKER = "moves:keep";

/** Validates a mapping and returns a resolver from any repository path to its final path. */
export function resolverFor(mapping: MoveMapping): (path: string) => string {
  for (const [from, to] of Object.entries(mapping)) {
    if (from.endsWith("/") !== to.endsWith("/")) {
      throw new MoveMappingError("a folder must map to a folder and a file to a file", from);
    }
  }
  const folders = Object.keys(mapping).filter((k) => k.endsWith("/"))
    .sort((a, b) => b.length - a.length);
  const step = (path: string): string => {
    if (path in mapping && !path.endsWith("/")) return mapping[path];
    const probe = path.endsWith("/") ? path : path + "/";
    for (const folder of folders) {
      if (probe.startsWith(folder)) {
        const out = mapping[folder] + probe.slice(folder.length);
        return path.endsWith("/") ? out : out.replace(/\/$/, "");
      }
    }
    return path;
  };
  return (path: string) => {
    let current = path;
    for (let i = 0; i < 32; i++) {
      const next = step(current);
      if (next === current) return current;
      current = next;
    }
    throw new MoveMappingError("the mapping loops", path);
  };
}

async function git(root: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args: ["-C", root, ...args] }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

async function trackedFiles(root: string): Promise<string[]> {
  const out = await git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard");
  const files = out.split("\0").filter((f) => f !== "");
  return [...new Set(files)].filter((f) => exists(posix.join(root, f)));
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

const SPECIFIER_PATTERNS = [
  /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]*)\2/g,
  /(\bnew URL\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\2(?=\s*,\s*import\.meta\.url)/g,
];

/** Where a relative specifier written in `dir` points, as a repository path ("" = root). */
function target(dir: string, spec: string): string | undefined {
  const joined = posix.normalize(posix.join(dir === "" ? "." : dir, spec));
  if (joined === "." || joined === "./") return "";
  if (joined.startsWith("../") || joined === "..") return undefined;
  return joined.replace(/^\.\//, "");
}

/** A relative specifier from `dir` to repository path `to`, keeping a trailing slash. */
function relativeSpec(dir: string, to: string, trailingSlash: boolean): string {
  let rel = posix.relative(dir === "" ? "." : dir, to === "" ? "." : to);
  if (rel === "") rel = ".";
  if (!rel.startsWith("../") && rel !== "..") rel = "./" + rel;
  if (rel === "./.") rel = ".";
  return trailingSlash && !rel.endsWith("/") ? rel + "/" : rel;
}

interface SpecContext {
  root: string;
  resolve: (path: string) => string;
  /** Old path of each file, for files that moved (this run or an earlier one). */
  oldPathOf: Map<string, string[]>;
  movedNow: Set<string>;
}

function rewriteSpecifier(file: string, spec: string, ctx: SpecContext): string {
  const trailing = spec.endsWith("/");
  const here = posix.dirname(file) === "." ? "" : posix.dirname(file);
  const live = (p: string | undefined) =>
    p !== undefined && (p === "" || exists(posix.join(ctx.root, p)));
  const fromOld = (): string | undefined => {
    for (const old of ctx.oldPathOf.get(file) ?? []) {
      const oldDir = posix.dirname(old) === "." ? "" : posix.dirname(old);
      const t = target(oldDir, spec);
      if (t === undefined) continue;
      const moved = ctx.resolve(t);
      if (live(moved)) return moved;
    }
    return undefined;
  };
  if (ctx.movedNow.has(file)) {
    const moved = fromOld();
    return moved === undefined ? spec : relativeSpec(here, moved, trailing);
  }
  const direct = target(here, spec);
  if (live(direct)) return spec;
  if (direct !== undefined && live(ctx.resolve(direct))) {
    return relativeSpec(here, ctx.resolve(direct), trailing);
  }
  const moved = fromOld();
  return moved === undefined ? spec : relativeSpec(here, moved, trailing);
}

function rewriteSpecifiers(file: string, text: string, ctx: SpecContext): string {
  return text.split("\n").map((line) => {
    if (line.includes(KEEP_MARKER)) return line;
    let out = line;
    for (const pattern of SPECIFIER_PATTERNS) {
      out = out.replace(pattern, (_m, lead: string, quote: string, spec: string) => {
        return `${lead}${quote}${rewriteSpecifier(file, spec, ctx)}${quote}`;
      });
    }
    return out;
  }).join("\n");
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Rewrites repository paths named in plain text. In TypeScript a path right after `/` or
 * `.` is a relative specifier (already handled) and is left alone; in Markdown `./` and
 * `../` prefixes are allowed, since doc links are relative to the doc.
 */
function textReplacer(mapping: MoveMapping, resolve: (p: string) => string) {
  const keys = Object.keys(mapping).sort((a, b) => b.length - a.length);
  const make = (before: string) =>
    keys.length === 0 ? undefined : new RegExp(
      `${before}(${
        keys.map((k) => escapeRegExp(k.endsWith("/") ? k.slice(0, -1) : k)).join("|")
      })(?=$|[^\\w.\\-]|\\.(?![\\w]))(/[\\w.\\-/]*)?`,
      "g",
    );
  const forCode = make("(?<![\\w\\-./@:])");
  const forDocs = make("(?<![\\w\\-@:]|[\\w\\-]/|[\\w\\-]\\.)");
  return (text: string, docs: boolean): string => {
    const re = docs ? forDocs : forCode;
    if (re === undefined) return text;
    return text.split("\n").map((line) =>
      line.includes(KEEP_MARKER) ? line : line.replace(re, (whole, base: string, rest = "") => {
        const full = base + rest;
        const mapped = resolve(full);
        if (mapped !== full) return mapped;
        const asDir = resolve(full + "/");
        return asDir !== full + "/" ? asDir.replace(/\/$/, "") : whole;
      })
    ).join("\n");
  };
}

const GENERATED = [/^api\/gen\//, /^cri\/gen\//, /(^|\/)target\//];

function textKind(file: string): "ts" | "docs" | "plain" | undefined {
  if (GENERATED.some((g) => g.test(file))) return undefined;
  if (file.startsWith("tools/moves/") || file.startsWith("tools/move_modules")) return undefined;
  if (file.endsWith(".ts")) return "ts";
  if (file.endsWith(".md")) return "docs";
  if (file === "deno.json" || /\.(sh|rs|toml|yaml)$/.test(file)) return "plain";
  if (file.startsWith(".ci/") && !file.includes(".", 4)) return "plain";
  return undefined;
}

/** Applies `mapping` to the git tree at `root`; see the module comment for what it does. */
export async function moveModules(
  root: string,
  mapping: MoveMapping,
  opts: { dryRun?: boolean } = {},
): Promise<MoveReport> {
  const resolve = resolverFor(mapping);
  const report: MoveReport = { moved: [], rewritten: [] };
  const movedNow = new Set<string>();
  for (const file of await trackedFiles(root)) {
    const to = resolve(file);
    if (to === file) continue;
    if (exists(posix.join(root, to))) {
      throw new MoveMappingError(`cannot move ${file}: the destination exists`, to);
    }
    report.moved.push([file, to]);
    movedNow.add(to);
    if (opts.dryRun) continue;
    await Deno.mkdir(posix.dirname(posix.join(root, to)), { recursive: true });
    await git(root, "mv", file, to);
  }
  const oldPathOf = new Map<string, string[]>();
  const addOld = (oldPath: string, newPath: string) => {
    oldPathOf.set(newPath, [...(oldPathOf.get(newPath) ?? []), oldPath]);
  };
  for (const [from, to] of report.moved) addOld(from, to);
  for (const from of Object.keys(mapping)) if (!from.endsWith("/")) addOld(from, resolve(from));
  const files = await trackedFiles(root);
  // Files under a moved folder: their old path is the new path with the folder prefix swapped.
  for (const from of Object.keys(mapping)) {
    if (!from.endsWith("/")) continue;
    const finalDir = resolve(from);
    for (const f of files) {
      if (f.startsWith(finalDir)) addOld(from + f.slice(finalDir.length), f);
    }
  }
  const ctx: SpecContext = { root, resolve, oldPathOf, movedNow };
  const replaceText = textReplacer(mapping, resolve);
  for (const file of files) {
    const kind = textKind(file);
    if (kind === undefined) continue;
    const path = posix.join(root, file);
    const before = await Deno.readTextFile(path);
    let after = kind === "ts" ? rewriteSpecifiers(file, before, ctx) : before;
    after = replaceText(after, kind === "docs");
    if (after === before) continue;
    report.rewritten.push(file);
    if (!opts.dryRun) await Deno.writeTextFile(path, after);
  }
  return report;
}

if (import.meta.main) {
  const args = [...Deno.args];
  const dryRun = args.includes("--dry-run");
  const rootAt = args.indexOf("--root");
  const root = rootAt >= 0 ? args[rootAt + 1] : Deno.cwd();
  const mappingFile = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--root");
  if (mappingFile === undefined || args.includes("--help")) {
    console.log("usage: deno run -A tools/move_modules.ts MAPPING.json [--root DIR] [--dry-run]");
    Deno.exit(mappingFile === undefined && !args.includes("--help") ? 2 : 0);
  }
  const mapping = JSON.parse(await Deno.readTextFile(mappingFile)) as MoveMapping;
  const report = await moveModules(root, mapping, { dryRun });
  for (const [from, to] of report.moved) console.log(`moved ${from} -> ${to}`);
  console.log(`${report.moved.length} moved, ${report.rewritten.length} files rewritten`);
}
