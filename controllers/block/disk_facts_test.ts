import assert from "node:assert/strict";
import { FakeBlockBackend, GPT_TYPE } from "../../platform/block/mod.ts";
import { gatherDiskFacts, hasMbrPartitions, isZero } from "./disk_facts.ts";
import { ext4Head, part } from "./fake_disks.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";

const MiB = 1024 * 1024;
const opts = { mountedSources: new Set<string>(), zeroBytes: 64 * 1024 };

Deno.test("isZero and hasMbrPartitions", () => {
  assert.ok(isZero(new Uint8Array(1001)));
  const b = new Uint8Array(1001);
  b[1000] = 1;
  assert.ok(!isZero(b));
  const mbr = new Uint8Array(512);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  assert.ok(!hasMbrPartitions(mbr));
  mbr[446 + 4] = 0xee;
  mbr[446 + 12] = 1;
  assert.ok(!hasMbrPartitions(mbr), "protective entry only");
  mbr[446 + 16 + 4] = 0x83;
  mbr[446 + 16 + 12] = 8;
  assert.ok(hasMbrPartitions(mbr));
});

Deno.test("facts of a blank disk, of a disk with a filesystem, and of a GPT disk", async () => {
  const b = new FakeBlockBackend();
  b.addDisk("/dev/vda", 32 * MiB);
  b.addDisk("/dev/vdb", 32 * MiB);
  b.addDisk("/dev/vdc", 32 * MiB, { readOnly: true });
  b.bytes("/dev/vdb").set(ext4Head("data", "0a0b0c0d-0e0f-4011-8213-141516171819"));
  const blank = await gatherDiskFacts(b, "/dev/vda", opts);
  assert.deepEqual(blank, {
    path: "/dev/vda",
    size: 32 * MiB,
    sectorSize: 512,
    readOnly: false,
    mbrPartitions: false,
    blank: true,
    mounted: false,
    wholeDiskFs: undefined,
  });
  const fs = await gatherDiskFacts(b, "/dev/vdb", {
    ...opts,
    mountedSources: new Set(["/dev/vdb"]),
  });
  assert.equal(fs.wholeDiskFs?.type, "ext4");
  assert.equal(fs.blank, false);
  assert.equal(fs.mounted, true);
  assert.equal((await gatherDiskFacts(b, "/dev/vdc", opts)).readOnly, true);

  const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 4);
  const data = part(2, GPT_TYPE.LINUX_FILESYSTEM, "data", 5, 4);
  const empty = part(3, T.STATE, N.STATE, 9, 4);
  await b.writeGpt("/dev/vda", {
    diskGuid: "11111111-2222-4333-8444-555555555555",
    partitions: [esp, data, empty],
  });
  b.bytes("/dev/vda").set(ext4Head("data", "0a0b0c0d-0e0f-4011-8213-141516171819"), 5 * MiB);
  b.bytes("/dev/vda")[1 * MiB + 100] = 7; // the ESP holds something unknown
  const gpt = await gatherDiskFacts(b, "/dev/vda", {
    ...opts,
    mountedSources: new Set(["/dev/vda2"]),
  });
  const parts = gpt.gpt!.partitions;
  assert.deepEqual(parts.map((p) => [p.name, p.fs?.type, p.blank, p.mounted, p.path]), [
    ["EFI", undefined, false, false, "/dev/vda1"],
    ["data", "ext4", false, true, "/dev/vda2"],
    ["STATE", undefined, true, false, "/dev/vda3"],
  ]);
  assert.equal(gpt.gpt!.diskGuid, "11111111-2222-4333-8444-555555555555");
});

Deno.test("a missing disk fails with ENOENT", async () => {
  await assert.rejects(
    gatherDiskFacts(new FakeBlockBackend(), "/dev/nope", opts),
    (e: Error & { code?: string }) => e.code === "ENOENT",
  );
});
