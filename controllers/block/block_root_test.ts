/**
 * Privileged: the block controllers against real loop devices over sparse
 * image files, real mkfs, real mounts. Needs root for losetup, BLKPG and
 * mount; the outer test re-runs this file in a private mount namespace
 * (`unshare --mount --propagation private`) so nothing is mounted on the
 * host, and the inner run refuses to start unless its namespace is not the
 * host's. Loop devices are detached and images removed afterwards.
 */
import assert from "node:assert/strict";
import { encodeGpt } from "../../platform/block/mod.ts";
import { assertNotHostNamespace, insideTestNamespace } from "../../platform/testing.ts";
import { MOUNT_STATUS, PROVISIONING_RECORD, VOLUME_STATUS } from "../../resources/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "../../layout/mod.ts";
import {
  bootBlock,
  have,
  loopDisk as loopDiskIn,
  registerNamespacedRun,
  rootSkipReason,
  run,
  sha256File,
  WAIT_MS,
  writeAll,
} from "./testing_root.ts";

const MiB = 1024 * 1024;
const skip = await rootSkipReason([
  "/usr/sbin/losetup",
  "/usr/sbin/mkfs.ext4",
  "/usr/sbin/mkfs.xfs",
  "/usr/sbin/blkid",
  "/usr/sbin/mkfs.fat",
]);

if (!insideTestNamespace("block")) {
  registerNamespacedRun({
    ns: "block",
    name: "block controllers on loop devices, in a private mount namespace " +
      "(needs root, the native addon, losetup, mkfs.ext4, mkfs.xfs, mkfs.fat, blkid, sgdisk)",
    skip,
    fileUrl: import.meta.url,
    passed: 4,
  });
} else {
  assertNotHostNamespace("mnt");
  registerInnerTests();
}

/** A sparse image attached as a loop device; `close` detaches and removes. */
const loopDisk = (size: number, prepare?: (file: string) => Promise<void>) =>
  loopDiskIn(size, "block-root-", prepare);

/** One "boot" of the block controllers on real backends. */
const boot = (disk: string, dir: string, wipe = false, ephemeralFilesystem?: "ext4" | "xfs") =>
  bootBlock(disk, dir, { wipe, ephemeralFilesystem });

function registerInnerTests(): void {
  Deno.test("a blank disk is provisioned, mounted, used, and left alone on the next boot", async () => {
    const disk = await loopDisk(512 * MiB);
    try {
      const t0 = performance.now();
      const first = boot(disk.dev, disk.dir);
      try {
        await first.mounted();
        console.log(
          `measured: blank 512 MiB disk provisioned and mounted in ${
            Math.round(performance.now() - t0)
          } ms`,
        );
        const [p1, p2] = [`${disk.dev}p1`, `${disk.dev}p2`];
        assert.equal(await run("blkid", "-s", "TYPE", "-o", "value", p1), "ext4");
        assert.equal(await run("blkid", "-s", "LABEL", "-o", "value", p1), "STATE");
        assert.equal(await run("blkid", "-s", "PARTLABEL", "-o", "value", p2), "EPHEMERAL");
        assert.equal(
          await run("blkid", "-s", "PART_ENTRY_TYPE", "-o", "value", "-p", p2),
          PARTITION_TYPE.EPHEMERAL,
        );
        const info = await Deno.readTextFile("/proc/self/mountinfo");
        assert.ok(info.includes(` ${disk.dir}/system/state `) && info.includes(p1));
        await Deno.writeTextFile(`${disk.dir}/var/data.txt`, "persisted\n");
        await waitForResource(first.store, PROVISIONING_RECORD, () => true, WAIT_MS);
        const record = JSON.parse(
          await Deno.readTextFile(`${disk.dir}/system/state/provisioned.json`),
        );
        assert.deepEqual(record.partitions.map((p: { name: string }) => p.name), [
          "STATE",
          "EPHEMERAL",
        ]);
      } finally {
        await first.shutdown();
      }
      assert.ok(!await have(`${disk.dir}/var/data.txt`), "unmounted");
      const uuids = await run("blkid", "-s", "UUID", "-o", "value", `${disk.dev}p1`);
      const tableBefore = await sha256File(disk.file, 0, 34 * 512);

      const second = boot(disk.dev, disk.dir, true);
      try {
        await second.mounted();
        assert.equal(await Deno.readTextFile(`${disk.dir}/var/data.txt`), "persisted\n");
        const st = second.store.get(VOLUME_STATUS, "block", "STATE").spec;
        assert.equal(st.decision, "leave");
        assert.equal(st.created, null);
        assert.deepEqual(second.events.history().map((e) => e.action).slice(0, 1), ["leave"]);
        assert.equal(await run("blkid", "-s", "UUID", "-o", "value", `${disk.dev}p1`), uuids);
        const rec = await waitForResource(second.store, PROVISIONING_RECORD, () => true, WAIT_MS);
        assert.equal(rec.spec.partitions.length, 2, "the record on STATE was read back");
      } finally {
        await second.shutdown();
      }
      assert.equal(await sha256File(disk.file, 0, 34 * 512), tableBefore, "table untouched");
    } finally {
      await disk.close();
    }
  });

  Deno.test("a disk with a foreign ext4 filesystem is refused and left byte for byte", async () => {
    const disk = await loopDisk(64 * MiB, async (file) => {
      await run("mkfs.ext4", "-q", "-F", "-L", "precious", file);
    });
    try {
      const before = await sha256File(disk.file);
      const b = boot(disk.dev, disk.dir);
      try {
        const st = await waitForResource(
          b.store,
          VOLUME_STATUS,
          (r) => r.spec.phase === "failed",
          WAIT_MS,
        );
        assert.equal(st.spec.error?.code, "foreign-data");
      } finally {
        await b.shutdown();
      }
      assert.equal(await sha256File(disk.file), before);
      assert.equal(await run("blkid", "-s", "LABEL", "-o", "value", disk.dev), "precious");
    } finally {
      await disk.close();
    }
  });

  Deno.test("an image built like the imager's is completed; its boot partitions are untouched", async () => {
    const espGuid = "e5e5e5e5-0000-4000-8000-000000000001";
    const disk = await loopDisk(384 * MiB, async (file) => {
      const writes = encodeGpt(
        {
          diskGuid: "d15c0000-0000-4000-8000-000000000001",
          partitions: [
            {
              number: 1,
              type: PARTITION_TYPE.EFI_SYSTEM,
              uuid: espGuid,
              name: PARTITION_NAME.EFI,
              firstLba: 2048,
              lastLba: 2048 + 32 * 2048 - 1,
              attributes: 0n,
            },
            {
              number: 2,
              type: PARTITION_TYPE.BOOT_SLOT,
              uuid: "e5e5e5e5-0000-4000-8000-00000000000a",
              name: PARTITION_NAME.BOOT_A,
              firstLba: 33 * 2048,
              lastLba: 41 * 2048 - 1,
              attributes: 0n,
            },
            {
              number: 3,
              type: PARTITION_TYPE.BOOT_SLOT,
              uuid: "e5e5e5e5-0000-4000-8000-00000000000b",
              name: PARTITION_NAME.BOOT_B,
              firstLba: 41 * 2048,
              lastLba: 49 * 2048 - 1,
              attributes: 0n,
            },
          ],
        },
        384 * MiB,
        512,
      );
      using f = await Deno.open(file, { write: true });
      for (const w of writes) {
        await f.seek(w.offset, Deno.SeekMode.Start);
        await writeAll(f, w.data);
      }
      await run("mkfs.fat", "-F", "32", "-n", "EFI", "--offset", "2048", file, String(32 * 1024));
      const slots = new Uint8Array(16 * MiB);
      for (let i = 0; i < slots.length; i += 4096) slots[i] = (i >> 12) & 0xff;
      await f.seek(33 * MiB, Deno.SeekMode.Start);
      await writeAll(f, slots);
    });
    try {
      const bootBefore = await sha256File(disk.file, MiB, 48 * MiB);
      const b = boot(disk.dev, disk.dir);
      try {
        await b.mounted();
        assert.deepEqual(b.events.history().map((e) => e.action).slice(0, 1), ["complete"]);
      } finally {
        await b.shutdown();
      }
      assert.equal(await sha256File(disk.file, MiB, 48 * MiB), bootBefore, "ESP and slots intact");
      const names = await run("sgdisk", "-p", disk.dev).catch(() => "");
      if (names) assert.match(names, /EFI[\s\S]*BOOT-A[\s\S]*BOOT-B[\s\S]*STATE[\s\S]*EPHEMERAL/);
      assert.equal(await run("blkid", "-s", "TYPE", "-o", "value", "-p", `${disk.dev}p1`), "vfat");
      assert.equal(await run("blkid", "-s", "LABEL", "-o", "value", `${disk.dev}p4`), "STATE");
    } finally {
      await disk.close();
    }
  });

  Deno.test("EPHEMERAL as xfs: made with mkfs.xfs and mounted as xfs", async () => {
    const disk = await loopDisk(512 * MiB);
    try {
      const b = boot(disk.dev, disk.dir, false, "xfs");
      try {
        await b.mounted();
        assert.equal(await run("blkid", "-s", "TYPE", "-o", "value", `${disk.dev}p2`), "xfs");
        assert.equal(
          await run("blkid", "-s", "LABEL", "-o", "value", `${disk.dev}p2`),
          "EPHEMERAL",
        );
        const st = b.store.get(MOUNT_STATUS, "block", "EPHEMERAL").spec;
        assert.equal(st.filesystem, "xfs");
        const info = await Deno.readTextFile("/proc/self/mountinfo");
        assert.match(info, new RegExp(` ${disk.dir}/var .* - xfs ${disk.dev}p2 `));
      } finally {
        await b.shutdown();
      }
    } finally {
      await disk.close();
    }
  });
}
