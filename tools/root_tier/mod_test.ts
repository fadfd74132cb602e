import assert from "node:assert/strict";
import { join } from "node:path";
import { findRootTests, runEach, selectModules } from "./mod.ts";

Deno.test("findRootTests: every *_root_test.ts, sorted, none from what .gitignore leaves out", async () => {
  const root = await Deno.makeTempDir();
  try {
    await new Deno.Command("git", { args: ["-C", root, "init", "-q"] }).output();
    await Deno.writeTextFile(join(root, ".gitignore"), "/build/\n/native-ops/target/\n");
    for (
      const f of ["b/x_root_test.ts", "a/y_root_test.ts", "a/y_test.ts", "build/c/z_root_test.ts"]
    ) {
      await Deno.mkdir(join(root, f, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, f), "");
    }
    await Deno.mkdir(join(root, "native-ops/target/d"), { recursive: true });
    await Deno.writeTextFile(join(root, "native-ops/target/d/w_root_test.ts"), "");
    assert.deepEqual(await findRootTests(root), ["a/y_root_test.ts", "b/x_root_test.ts"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("selectModules: no filter keeps all, filters keep the paths naming one", () => {
  const all = ["controllers/block/a_root_test.ts", "platform/crypt/b_root_test.ts"];
  assert.deepEqual(selectModules(all, []), all);
  assert.deepEqual(selectModules(all, ["crypt"]), ["platform/crypt/b_root_test.ts"]);
  assert.deepEqual(selectModules(all, ["nothing"]), []);
});

Deno.test("runEach: a module that fails is named, one that passes is not", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(root, "deno.json"), "{}\n");
    await Deno.writeTextFile(join(root, "good_root_test.ts"), 'Deno.test("good", () => {});\n');
    await Deno.writeTextFile(
      join(root, "bad_root_test.ts"),
      'Deno.test("bad", () => { throw new Error("planted"); });\n',
    );
    assert.deepEqual(
      await runEach(["bad_root_test.ts", "good_root_test.ts"], root, "null"),
      ["bad_root_test.ts"],
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
