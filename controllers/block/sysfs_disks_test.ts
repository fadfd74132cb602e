import assert from "node:assert/strict";
import { writeFakeSysfs } from "./fake_disks.ts";
import { diskKind, readSysfsDisks } from "./sysfs_disks.ts";

const MiB = 1024 * 1024;

Deno.test("reads disks, identity, flags and partitions; skips unbound loops and empty zram", async () => {
  const root = await Deno.makeTempDir({ prefix: "sysfs-" });
  try {
    await writeFakeSysfs(root, [
      {
        name: "vda",
        size: 64 * MiB,
        dev: "254:0",
        rotational: true,
        serial: "disk-1",
        partitions: [{ number: 1, start: MiB, size: 8 * MiB }],
      },
      {
        name: "nvme0n1",
        size: 128 * MiB,
        logicalBlockSize: 4096,
        model: "Fast SSD",
        deviceSerial: "S123",
        wwid: "eui.0025",
        readOnly: true,
        removable: true,
      },
      { name: "loop0", size: 0 },
      { name: "loop1", size: 32 * MiB, backingFile: "/tmp/disk.img" },
      { name: "zram0", size: 0 },
    ]);
    const disks = await readSysfsDisks(root);
    assert.deepEqual(disks.map((d) => d.name), ["loop1", "nvme0n1", "vda"]);
    const [loop, nvme, vda] = disks;
    assert.equal(loop.backingFile, "/tmp/disk.img");
    assert.equal(loop.kind, "loop");
    assert.deepEqual(
      { ...nvme, partitions: undefined },
      {
        name: "nvme0n1",
        dev: "254:0",
        size: 128 * MiB,
        logicalSectorSize: 4096,
        physicalSectorSize: 4096,
        model: "Fast SSD",
        serial: "S123",
        wwid: "eui.0025",
        rotational: false,
        readOnly: true,
        removable: true,
        kind: "nvme",
        backingFile: "",
        partitions: undefined,
      },
    );
    assert.equal(vda.serial, "disk-1");
    assert.equal(vda.kind, "hdd");
    assert.deepEqual(vda.partitions, [{ name: "vda1", number: 1, start: MiB, size: 8 * MiB }]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a missing sysfs root lists nothing", async () => {
  assert.deepEqual(await readSysfsDisks("/nonexistent-sysfs"), []);
});

Deno.test("device kinds by name", () => {
  assert.equal(diskKind("sda", false), "ssd");
  assert.equal(diskKind("sda", true), "hdd");
  assert.equal(diskKind("mmcblk0", false), "sd");
  assert.equal(diskKind("sr0", true), "cdrom");
  assert.equal(diskKind("dm-0", false), "virtual");
  assert.equal(diskKind("zram0", false), "ram");
});

Deno.test({
  name: "the host's sysfs reads without error (needs /sys/block)",
  ignore: !(await Deno.stat("/sys/block").then(() => true, () => false)),
  fn: async () => {
    for (const d of await readSysfsDisks("/sys")) {
      assert.ok(d.size > 0 && d.logicalSectorSize >= 512, d.name);
    }
  },
});
