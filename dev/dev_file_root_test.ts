import { equal } from "node:assert/strict";
import { join } from "node:path";
import { devFileRoot } from "./dev_mode.ts";

Deno.test("dev mode's file root: its own /var/log, /system/state is the state dir, twice", async () => {
  const state = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(join(state, "config.yaml"), "version: v1alpha1\n");
    const root = await devFileRoot(state);
    equal(await devFileRoot(state), root);
    equal(await Deno.realPath(join(root, "system/state")), state);
    equal(await Deno.readTextFile(join(root, "system/state/config.yaml")), "version: v1alpha1\n");
    equal((await Deno.stat(join(root, "var/log"))).isDirectory, true);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
});
