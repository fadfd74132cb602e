import assert from "node:assert/strict";

const assertEquals = (a: unknown, b: unknown) => assert.deepEqual(a, b);
const assertThrows = (f: () => unknown, e: new (...a: never[]) => Error) => assert.throws(f, e);
import { MoveMappingError, moveModules, resolverFor } from "./move_modules.ts";

async function git(root: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args: ["-C", root, ...args] }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "move_modules_test_" });
  await git(root, "init", "-q");
  await write(root, files);
  await git(root, "add", "-A");
  return root;
}

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${path.split("/").slice(0, -1).join("/") || "."}`, {
      recursive: true,
    });
    await Deno.writeTextFile(`${root}/${path}`, text);
  }
}

const read = (root: string, path: string) => Deno.readTextFile(`${root}/${path}`);

const MAPPING = {
  "node/upgrade/": "upgrade/",
  "node/upgrade/manifest.ts": "bundle/manifest.ts",
  "node/api_host.ts": "api/host/api_host.ts",
};

const FILES = {
  "main.ts": 'import { host } from "./node/api_host.ts";\nexport * from "./node/upgrade/mod.ts";\n',
  "node/api_host.ts": [
    'import { m } from "./upgrade/manifest.ts";',
    'import type { X } from "../config/schema.ts";',
    'const data = new URL("./testdata/", import.meta.url);',
    'const root = new URL("../", import.meta.url);',
    'const lazy = await import("./upgrade/mod.ts");',
    "",
  ].join("\n"),
  "node/upgrade/mod.ts": 'export { m } from "./manifest.ts";\nimport "../api_host.ts";\n',
  "node/upgrade/manifest.ts": 'import { s } from "../../config/schema.ts";\n',
  "node/testdata/a.txt": "a\n",
  "config/schema.ts": "export const s = 1;\n",
  "docs/x.md":
    "See [the host](../node/api_host.ts) and `node/upgrade/mod.ts`, not `xnode/upgrade`.\n",
  "deno.json": '{"tasks": {"up": "deno run -A node/upgrade/mod.ts"}}\n',
};

Deno.test("resolverFor: file entries win over folders, the longest folder wins, chains follow", () => {
  const resolve = resolverFor({ ...MAPPING, "upgrade/old.ts": "upgrade/new.ts" });
  assertEquals(resolve("node/upgrade/manifest.ts"), "bundle/manifest.ts");
  assertEquals(resolve("node/upgrade/a/b.ts"), "upgrade/a/b.ts");
  assertEquals(resolve("node/upgrade"), "upgrade");
  assertEquals(resolve("node/upgrade/old.ts"), "upgrade/new.ts");
  assertEquals(resolve("node/other.ts"), "node/other.ts");
});

Deno.test("resolverFor: refuses a folder mapped to a file and a loop", () => {
  assertThrows(() => resolverFor({ "a/": "b.ts" }), MoveMappingError);
  assertThrows(() => resolverFor({ "a.ts": "b.ts", "b.ts": "a.ts" })("a.ts"), MoveMappingError);
});

Deno.test("moveModules: moves files and rewrites specifiers, URLs, docs and tasks", async () => {
  const root = await tree(FILES);
  const report = await moveModules(root, MAPPING);
  assertEquals(report.moved.length, 3);
  assertEquals(
    await read(root, "main.ts"),
    'import { host } from "./api/host/api_host.ts";\nexport * from "./upgrade/mod.ts";\n',
  );
  assertEquals(
    (await read(root, "api/host/api_host.ts")).split("\n").slice(0, 5),
    [
      'import { m } from "../../bundle/manifest.ts";',
      'import type { X } from "../../config/schema.ts";',
      'const data = new URL("../../node/testdata/", import.meta.url);',
      'const root = new URL("../../", import.meta.url);',
      'const lazy = await import("../../upgrade/mod.ts");',
    ],
  );
  assertEquals(
    await read(root, "upgrade/mod.ts"),
    'export { m } from "../bundle/manifest.ts";\nimport "../api/host/api_host.ts";\n',
  );
  assertEquals(
    await read(root, "bundle/manifest.ts"),
    'import { s } from "../config/schema.ts";\n',
  );
  assertEquals(
    await read(root, "docs/x.md"),
    "See [the host](../api/host/api_host.ts) and `upgrade/mod.ts`, not `xnode/upgrade`.\n",
  );
  assertEquals(await read(root, "deno.json"), '{"tasks": {"up": "deno run -A upgrade/mod.ts"}}\n');
});

Deno.test("moveModules: a rerun on a moved tree changes nothing", async () => {
  const root = await tree(FILES);
  await moveModules(root, MAPPING);
  const again = await moveModules(root, MAPPING);
  assertEquals(again, { moved: [], rewritten: [] });
});

Deno.test("moveModules: a branch merged later that imports old paths is fixed by a rerun", async () => {
  const root = await tree(FILES);
  await moveModules(root, MAPPING);
  await write(root, {
    "e2e/late_test.ts": 'import { m } from "../node/upgrade/manifest.ts";\n',
    "node/upgrade/late.ts": 'import { a } from "../api_host.ts";\nimport "./mod.ts";\n',
  });
  await git(root, "add", "-A");
  const report = await moveModules(root, MAPPING);
  assertEquals(report.moved, [["node/upgrade/late.ts", "upgrade/late.ts"]]);
  assertEquals(
    await read(root, "e2e/late_test.ts"),
    'import { m } from "../bundle/manifest.ts";\n',
  );
  assertEquals(
    await read(root, "upgrade/late.ts"),
    'import { a } from "../api/host/api_host.ts";\nimport "./mod.ts";\n',
  );
});

Deno.test("moveModules: --dry-run reports without touching the tree", async () => {
  const root = await tree(FILES);
  const report = await moveModules(root, MAPPING, { dryRun: true });
  assertEquals(report.moved.length, 3);
  assertEquals(await read(root, "main.ts"), FILES["main.ts"]);
});

Deno.test("moveModules: lines marked moves:keep are left as written", async () => {
  const root = await tree({
    "node/api_host.ts": "export const a = 1;\n",
    "docs/d.md": "`node/api_host.ts` moved <!-- moves:keep -->\n`node/api_host.ts`\n",
  });
  await moveModules(root, MAPPING);
  assertEquals(
    await read(root, "docs/d.md"),
    "`node/api_host.ts` moved <!-- moves:keep -->\n`api/host/api_host.ts`\n",
  );
});
