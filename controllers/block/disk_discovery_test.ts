import assert from "node:assert/strict";
import { FakeBlockBackend, GPT_TYPE } from "../../platform/block/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import { DISCOVERED_VOLUME, DISK_STATUS, type ResourceSpecs } from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import { DiskDiscoveryController, POLL_RESCAN_MS, UEVENT_RESCAN_MS } from "./disk_discovery.ts";
import { FakeUeventBackend } from "../../platform/uevent/mod.ts";
import { ext4Head, part, writeFakeSysfs, xfsHead } from "./fake_disks.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";

const MiB = 1024 * 1024;
const U1 = "0a0b0c0d-0e0f-4011-8213-141516171819";
const U2 = "1a0b0c0d-0e0f-4011-8213-141516171819";

Deno.test("discovery: disks, GPT and kernel partitions, filesystems; vanished disks go", async () => {
  const root = await Deno.makeTempDir({ prefix: "disc-" });
  const block = new FakeBlockBackend();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  try {
    block.addDisk("/dev/vda", 32 * MiB);
    await block.writeGpt("/dev/vda", {
      diskGuid: "d15c0000-0000-4000-8000-000000000001",
      partitions: [
        part(1, T.EFI_SYSTEM, N.EFI, 1, 4),
        part(2, GPT_TYPE.LINUX_FILESYSTEM, "data", 5, 8),
      ],
    });
    block.bytes("/dev/vda").set(ext4Head("data", U1), 5 * MiB);
    block.addDisk("/dev/vdb", 16 * MiB);
    block.bytes("/dev/vdb").set(xfsHead("scratch", U2));
    block.addDisk("/dev/sdc", 16 * MiB);
    const mbr = block.bytes("/dev/sdc");
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    mbr[446 + 4] = 0x83;
    mbr[446 + 12] = 0x10;
    mbr.set(ext4Head("old", U1), MiB);
    block.addDisk("/dev/loop1", 8 * MiB);
    await writeFakeSysfs(root, [
      { name: "vda", size: 32 * MiB, serial: "vd-1", rotational: true },
      { name: "vdb", size: 16 * MiB },
      {
        name: "sdc",
        size: 16 * MiB,
        model: "USB",
        removable: true,
        partitions: [{ number: 1, start: MiB, size: 4 * MiB }],
      },
      { name: "loop0", size: 0 },
      { name: "loop1", size: 8 * MiB, backingFile: "/tmp/x.img" },
      { name: "vdz", size: 8 * MiB },
    ]);
    runtime.register(
      new DiskDiscoveryController({
        backend: block,
        mounts: new FakeMountBackend(),
        sysfsRoot: root,
        resyncInterval: 30,
        // What the store holds when the first full scan says it is done: every disk, every volume.
        onFirstScan: () => {
          firstScans.push([
            store.list(DISK_STATUS).map((r) => r.metadata.id).sort(),
            store.list(DISCOVERED_VOLUME).length,
          ]);
          scanned.resolve();
        },
      }),
    );
    const firstScans: Array<[string[], number]> = [];
    const scanned = Promise.withResolvers<void>();
    runtime.start();
    await scanned.promise;
    await new Promise((r) => setTimeout(r, 100)); // three more full scans: still called once
    assert.deepEqual(firstScans, [[["loop1", "sdc", "vda", "vdb", "vdz"], 4]]);
    const disks = Object.fromEntries(store.list(DISK_STATUS).map((r) => [r.metadata.id, r.spec]));
    assert.deepEqual(Object.keys(disks).sort(), ["loop1", "sdc", "vda", "vdb", "vdz"]);
    assert.deepEqual(
      [
        disks.vda.partitionTable,
        disks.vda.layout,
        disks.vda.partitions,
        disks.vda.serial,
        disks.vda.kind,
      ],
      ["gpt", "foreign", 2, "vd-1", "hdd"],
    );
    assert.equal(disks.vda.diskGuid, "d15c0000-0000-4000-8000-000000000001");
    assert.deepEqual([disks.vdb.partitionTable, disks.vdb.layout], ["none", "foreign"]);
    assert.deepEqual([disks.sdc.partitionTable, disks.sdc.removable, disks.sdc.model], [
      "mbr",
      true,
      "USB",
    ]);
    assert.deepEqual([disks.loop1.layout, disks.loop1.backingFile], ["blank", "/tmp/x.img"]);
    assert.deepEqual([disks.vdz.layout, disks.vdz.error], ["unknown", "ENOENT"]);

    const vols = Object.fromEntries(
      store.list(DISCOVERED_VOLUME).map((r) => [r.metadata.id, r.spec]),
    );
    assert.deepEqual(Object.keys(vols).sort(), ["sdc1", "vda1", "vda2", "vdb"]);
    assert.deepEqual(
      [vols.vda1.role, vols.vda1.partitionLabel, vols.vda1.offset, vols.vda1.inKernel],
      ["efi", "EFI", MiB, false],
    );
    assert.deepEqual(
      [
        vols.vda2.filesystem,
        vols.vda2.filesystemLabel,
        vols.vda2.filesystemUuid,
        vols.vda2.devicePath,
      ],
      ["ext4", "data", U1, "/dev/vda2"],
    );
    assert.deepEqual([vols.vdb.partitionNumber, vols.vdb.filesystem, vols.vdb.filesystemLabel], [
      0,
      "xfs",
      "scratch",
    ]);
    assert.deepEqual([vols.sdc1.filesystem, vols.sdc1.inKernel, vols.sdc1.size], [
      "ext4",
      true,
      4 * MiB,
    ]);

    await Deno.remove(`${root}/block/vdb`, { recursive: true });
    await waitForAbsence(store, DISK_STATUS, (r) => r.metadata.id === "vdb");
    await waitForAbsence(store, DISCOVERED_VOLUME, (r) => r.metadata.id === "vdb");
  } finally {
    await runtime.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("discovery by uevents: add, change and remove re-read only that disk; a resync rescans all", async () => {
  const root = await Deno.makeTempDir({ prefix: "disc-ue-" });
  const block = new FakeBlockBackend();
  const uevents = new FakeUeventBackend();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const block_ = (action: string, name: string, devtype = "disk", parent?: string) =>
    uevents.inject({
      action,
      devpath: `/devices/virtual/block/${parent ? `${parent}/` : ""}${name}`,
      subsystem: "block",
      devname: name,
      devtype,
    });
  try {
    for (const d of ["vda", "vdb", "vdc"]) block.addDisk(`/dev/${d}`, 16 * MiB);
    await writeFakeSysfs(root, [{ name: "vda", size: 16 * MiB }]);
    const discovery = new DiskDiscoveryController({
      backend: block,
      mounts: new FakeMountBackend(),
      uevents,
      sysfsRoot: root,
      resyncInterval: 3_600_000, // only events and resyncs can show a change here
    });
    runtime.register(discovery);
    runtime.start();
    await waitForResource(store, DISK_STATUS, (r) => r.metadata.id === "vda");
    assert.equal(discovery.resyncInterval, 3_600_000, "the slow safety net while uevents flow");

    // A partition's change re-reads its disk (and, once seen, the start-up rescans are over).
    block.bytes("/dev/vda").set(xfsHead("grown", U2));
    block_("change", "vda1", "partition", "vda");
    await waitForResource(store, DISCOVERED_VOLUME, (r) => r.metadata.id === "vda");
    assert.equal(store.get(DISCOVERED_VOLUME, "block", "vda").spec.filesystemLabel, "grown");

    // vdc appears in sysfs without an event: only vdb's add is read.
    await writeFakeSysfs(root, [{ name: "vdb", size: 16 * MiB }, { name: "vdc", size: 16 * MiB }]);
    block_("add", "vdb");
    await waitForResource(store, DISK_STATUS, (r) => r.metadata.id === "vdb");
    assert.equal(store.find(DISK_STATUS, "block", "vdc"), undefined);

    // Events were lost: everything is rescanned, so vdc shows up.
    uevents.overrun(5000);
    await waitForResource(store, DISK_STATUS, (r) => r.metadata.id === "vdc");

    await Deno.remove(`${root}/block/vdb`, { recursive: true });
    block_("remove", "vdb");
    await waitForAbsence(store, DISK_STATUS, (r) => r.metadata.id === "vdb");
    assert.deepEqual(store.list(DISK_STATUS).map((r) => r.metadata.id).sort(), ["vda", "vdc"]);
    assert.ok(store.find(DISCOVERED_VOLUME, "block", "vda"), "another disk's volume is kept");
  } finally {
    await runtime.stop();
    await Deno.remove(root, { recursive: true });
  }
  assert.equal(uevents.subscriptions, 0, "the watch closed its subscription");
});

Deno.test("discovery without live uevents rescans every 10 s at most", async () => {
  const uevents = new FakeUeventBackend();
  uevents.faults.failNext("subscribe", "EPERM");
  const discovery = new DiskDiscoveryController({
    backend: new FakeBlockBackend(),
    mounts: new FakeMountBackend(),
    uevents,
  });
  assert.equal(discovery.resyncInterval, POLL_RESCAN_MS);
  await assert.rejects(discovery.watch(() => {}, new AbortController().signal));
  assert.equal(discovery.resyncInterval, POLL_RESCAN_MS);
  assert.equal(
    new DiskDiscoveryController({ backend: new FakeBlockBackend(), mounts: new FakeMountBackend() })
      .resyncInterval,
    POLL_RESCAN_MS,
  );
  assert.equal(UEVENT_RESCAN_MS, 60_000);
});
