import assert from "node:assert/strict";
import { fixBypasses } from "./fix_bypasses.ts";

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "fix_bypasses_test_" });
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(`${root}/${path.split("/").slice(0, -1).join("/") || "."}`, {
      recursive: true,
    });
    await Deno.writeTextFile(`${root}/${path}`, text);
  }
  const git = await new Deno.Command("git", { args: ["-C", root, "init", "-q"] }).output();
  assert.ok(git.success);
  return root;
}

Deno.test("fixBypasses: an import of a room's inner file goes through its mod.ts", async () => {
  const root = await tree({
    "a/x.ts": 'import { c } from "../b/c.ts";\nimport { f } from "../b/testing.ts";\n',
    "a/x_test.ts": 'import { f } from "../b/testing.ts";\nimport { y } from "./y.ts";\n',
    "a/y.ts": "export const y = 1;\n",
    "b/c.ts": "export const c = 1;\n",
    "b/testing.ts": "export const f = 1;\n",
    "b/mod.ts": 'export { c } from "./c.ts";\n',
    "d/z.ts": 'import { e } from "../e/e.ts";\n',
    "e/e.ts": "export const e = 1;\n",
  });
  const dry = await fixBypasses(root, { dryRun: true });
  assert.equal(
    await Deno.readTextFile(`${root}/a/x.ts`),
    'import { c } from "../b/c.ts";\n' +
      'import { f } from "../b/testing.ts";\n',
  );
  const r = await fixBypasses(root);
  assert.deepEqual(r, dry);
  assert.deepEqual(r.rewritten.map((w) => `${w.file}: ${w.from} -> ${w.to}`), [
    "a/x.ts: ../b/c.ts -> ../b/mod.ts",
    "a/x.ts: ../b/testing.ts -> ../b/mod.ts",
  ]);
  assert.deepEqual(r.unfixable, [{ file: "d/z.ts", target: "e/e.ts" }]);
  assert.equal(
    await Deno.readTextFile(`${root}/a/x.ts`),
    'import { c } from "../b/mod.ts";\nimport { f } from "../b/mod.ts";\n',
  );
  assert.deepEqual((await fixBypasses(root)).rewritten, []);
  await Deno.remove(root, { recursive: true });
});
