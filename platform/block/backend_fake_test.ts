import assert from "node:assert/strict";
import { isSysError } from "../../native-ops/mod.ts";
import { FakeBlockBackend } from "./backend_fake.ts";
import { DISK_SIZE, registerBlockConformance, sampleTable } from "./backend_conformance.ts";

registerBlockConformance("fake block backend", {
  setup() {
    const backend = new FakeBlockBackend();
    backend.addDisk("/dev/vda", DISK_SIZE);
    return Promise.resolve({
      backend,
      disk: "/dev/vda",
      hold: (n: number) => Promise.resolve(backend.hold("/dev/vda", n)),
    });
  },
  teardown: () => Promise.resolve(),
});

Deno.test("fake block: image files have no kernel view", async () => {
  const b = new FakeBlockBackend();
  b.addImage("/tmp/disk.raw", DISK_SIZE);
  await b.writeGpt("/tmp/disk.raw", sampleTable());
  await assert.rejects(b.rereadPartitions("/tmp/disk.raw"), (e) => isSysError(e, "ENOTTY"));
  assert.deepEqual(await b.kernelPartitions("/tmp/disk.raw"), []);
});

Deno.test("fake block: read-only disks refuse writes; faults are injectable", async () => {
  const b = new FakeBlockBackend();
  b.addDisk("/dev/sr0", 1 << 20, { readOnly: true });
  assert.equal((await b.geometry("/dev/sr0")).readOnly, true);
  await assert.rejects(b.write("/dev/sr0", 0, new Uint8Array(1)), (e) => isSysError(e, "EROFS"));
  b.faults.failNext("readGpt", "EIO");
  await assert.rejects(b.readGpt("/dev/sr0"), (e) => isSysError(e, "EIO"));
  assert.equal(await b.readGpt("/dev/sr0"), undefined);
});
