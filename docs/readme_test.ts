/**
 * The front page stays a page a newcomer reads in two minutes, keeps the two
 * commands CI runs verbatim (.ci/run), and no relative link in README.md or
 * docs/*.md points to a missing file or heading.
 * @module
 */
import { equal, ok } from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The README's size limit in bytes (issue: "under 8 KB"). */
export const README_MAX_BYTES = 8192;
/** The lines CI and newcomers run, exactly as .ci/run runs the test one. */
export const TWO_COMMANDS = [
  "bash .ci/install.sh && .ci/bin/deno task up",
  "bash .ci/install.sh && .ci/bin/deno task test",
];

/** Markdown without fenced code blocks and inline code, where links are not links. */
export function withoutCode(md: string): string {
  return md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_]{1,2}([^*_]+)[*_]{1,2}/g, "$1");
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** Every anchor a file's headings make, with GitHub's -1, -2 for repeats. */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const prose = md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const m of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The relative link targets of a markdown file (no scheme, not a bare `#`). */
export function relativeLinks(md: string): string[] {
  const links: string[] = [];
  for (const m of withoutCode(md).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) links.push(m[1]);
  }
  return links;
}

/** What is wrong with each relative link of `file` (a path under ROOT), as messages. */
export async function brokenLinks(file: string): Promise<string[]> {
  const md = await Deno.readTextFile(join(ROOT, file));
  const problems: string[] = [];
  for (const link of relativeLinks(md)) {
    const [path, anchor] = link.split("#", 2);
    const target = path === "" ? file : normalize(join(dirname(file), decodeURI(path)));
    let text: string | undefined;
    try {
      const info = await Deno.stat(join(ROOT, target));
      if (info.isFile && target.endsWith(".md")) text = await Deno.readTextFile(join(ROOT, target));
    } catch {
      problems.push(`${file}: ${link}: no file ${target}`);
      continue;
    }
    if (anchor && text !== undefined && !anchors(text).has(anchor)) {
      problems.push(`${file}: ${link}: no heading #${anchor} in ${target}`);
    }
  }
  return problems;
}

async function markdownFiles(): Promise<string[]> {
  const files = ["README.md"];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) files.push(join("docs", e.name));
  }
  return files.sort();
}

Deno.test("README.md is under 8 KB", async () => {
  const size = (await Deno.stat(join(ROOT, "README.md"))).size;
  ok(size < README_MAX_BYTES, `README.md is ${size} bytes; keep it under ${README_MAX_BYTES}`);
});

Deno.test("README.md has the two commands, each on a line of its own", async () => {
  const lines = (await Deno.readTextFile(join(ROOT, "README.md"))).split("\n");
  ok(lines.includes("## Two commands"), "the '## Two commands' heading");
  for (const command of TWO_COMMANDS) ok(lines.includes(command), `README.md lacks: ${command}`);
});

Deno.test("every relative link in README.md and docs/*.md finds its file and heading", async () => {
  const problems = (await Promise.all((await markdownFiles()).map(brokenLinks))).flat();
  equal(problems.join("\n"), "");
});

Deno.test("link checking: a missing file and a missing heading are found", () => {
  equal(slug("Signed A/B upgrades"), "signed-ab-upgrades");
  equal(slug("`deno task up` installs"), "deno-task-up-installs");
  const a = anchors("# Status\n## Details\n```\n# not a heading\n```\n## Details\n");
  equal([...a].join(" "), "status details details-1");
  equal(
    relativeLinks("[a](x.md#y) [b](https://e.org) `[c](z.md)` [d](#top)").join(" "),
    "x.md#y #top",
  );
});
