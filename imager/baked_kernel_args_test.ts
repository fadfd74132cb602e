import assert from "node:assert/strict";
import { withBakedKernelArgs } from "./baked_kernel_args.ts";

Deno.test("the baked config's kernel args land before -- of the image's command line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/c.yaml`;
    await Deno.writeTextFile(
      path,
      "version: v1alpha1\nmachine:\n  hostname: n\n  kernel:\n    args:\n" +
        "      add: [nosmt]\n      remove: [quiet]\n",
    );
    const line = "console=ttyS0 quiet rdinit=/i -- /bin/x";
    assert.equal(await withBakedKernelArgs(line, path), "console=ttyS0 rdinit=/i nosmt -- /bin/x");
    assert.equal(await withBakedKernelArgs(line), line);
    await Deno.writeTextFile(path, "version: v1alpha1\nmachine: {hostname: 7}\n");
    assert.equal(await withBakedKernelArgs(line, path), line, "an invalid config adds none");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
