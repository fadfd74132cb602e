import assert from "node:assert/strict";
import { killCgroupTree } from "./node_reset.ts";

Deno.test("killCgroupTree writes cgroup.kill, and refuses a tree holding machined itself", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const tree = `${dir}/machined`;
    await Deno.mkdir(tree);
    await killCgroupTree(tree, () => Promise.resolve("0::/\n"), dir);
    assert.equal(await Deno.readTextFile(`${tree}/cgroup.kill`), "1");
    await Deno.remove(`${tree}/cgroup.kill`);
    await assert.rejects(
      killCgroupTree(tree, () => Promise.resolve("0::/machined/pid1\n"), dir),
      /machined itself runs/,
    );
    await assert.rejects(Deno.stat(`${tree}/cgroup.kill`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
