/**
 * The native block backend on an image file (no root needed): the ioctls
 * answer ENOTTY, everything in userspace works.
 */
import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { NativeBlockBackend } from "./backend_native.ts";
import { sampleTable } from "./backend_conformance.ts";

const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const haveAddon = await Deno.stat(addon).then(() => true, () => false);
if (!haveAddon) console.log("skipping native block image tests: addon not built");

Deno.test({
  name: "native block: image files are disks without a kernel view (needs the native addon)",
  ignore: !haveAddon,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "blkimg-" });
    try {
      const file = `${dir}/disk.raw`;
      await Deno.writeFile(file, new Uint8Array(16 << 20));
      const b = new NativeBlockBackend();
      assert.deepEqual(await b.geometry(file), {
        size: 16 << 20,
        logicalSectorSize: 512,
        physicalSectorSize: 512,
        readOnly: false,
      });
      const table = sampleTable();
      table.partitions = table.partitions.slice(0, 1);
      await b.writeGpt(file, table);
      assert.deepEqual((await b.readGpt(file))?.table, table);
      assert.deepEqual(await b.kernelPartitions(file), []);
      await assert.rejects(
        b.rereadPartitions(file),
        (e) => isSysError(e, "ENOTTY") && e.op === "BLKRRPART",
      );
      await assert.rejects(b.discard(file, 0, 512), (e) => isSysError(e, "ENOTTY"));
      await assert.rejects(b.read(`${dir}/missing`, 0, 1), (e) => isSysError(e, "ENOENT"));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
