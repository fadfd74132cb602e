/**
 * Privileged: a reset's wipe on real loop devices, in a private mount
 * namespace (as block_root_test.ts). A disk provisioned by the block
 * controllers is wiped by the record they wrote, and the next "boot" (a new
 * store and runtime) re-provisions it, with new GUIDs, a new record, the
 * marker on /var gone and the ESP byte for byte; on a disk that also holds a
 * foreign partition, only the recorded partitions go and the foreign one
 * keeps its bytes; a LUKS2 STATE is crypto-erased first (no key opens it).
 */
import assert from "node:assert/strict";
import { encodeGpt, GPT_TYPE, NativeBlockBackend } from "../../platform/block/mod.ts";
import { assertNotHostNamespace, insideTestNamespace } from "../../platform/testing.ts";
import { PROVISIONING_RECORD, VOLUME_STATUS } from "../../resources/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "../../layout/mod.ts";
import { resetTargets, wipeResetTargets } from "./reset_plan.ts";
import { NativeCryptBackend, TEST_PBKDF } from "../../platform/crypt/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import {
  bootBlock,
  have,
  loopDisk as loopDiskIn,
  readAt,
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
  "/usr/sbin/blkid",
  "/usr/sbin/mkfs.fat",
  "/usr/sbin/cryptsetup",
]);

if (!insideTestNamespace("block-reset")) {
  registerNamespacedRun({
    ns: "block-reset",
    name: "reset wipe on loop devices, in a private mount namespace " +
      "(needs root, the native addon, losetup, mkfs.ext4, mkfs.fat, blkid, cryptsetup)",
    skip,
    fileUrl: import.meta.url,
    passed: 3,
  });
} else {
  assertNotHostNamespace("mnt");
  registerInnerTests();
}

type Part = {
  number: number;
  type: string;
  uuid: string;
  name: string;
  first: number;
  mib: number;
};

/** A sparse image with a GPT of `parts` (and a FAT ESP in partition 1), on a loop device. */
function loopDisk(size: number, parts: Part[]) {
  return loopDiskIn(size, "reset-root-", async (file) => {
    const writes = encodeGpt(
      {
        diskGuid: "d15c0000-0000-4000-8000-00000000000e",
        partitions: parts.map((p) => ({
          number: p.number,
          type: p.type,
          uuid: p.uuid,
          name: p.name,
          firstLba: p.first * 2048,
          lastLba: (p.first + p.mib) * 2048 - 1,
          attributes: 0n,
        })),
      },
      size,
      512,
    );
    {
      using f = await Deno.open(file, { write: true });
      for (const w of writes) {
        await f.seek(w.offset, Deno.SeekMode.Start);
        await writeAll(f, w.data);
      }
    }
    await run("mkfs.fat", "-F", "32", "-n", "EFI", "--offset", "2048", file, String(32 * 1024));
  });
}

const ESP: Part = {
  number: 1,
  type: PARTITION_TYPE.EFI_SYSTEM,
  uuid: "e5e5e5e5-0000-4000-8000-000000000001",
  name: PARTITION_NAME.EFI,
  first: 1,
  mib: 32,
};

/** One "boot" of the block controllers on real backends; `record` waits for the mounts and the record. */
function boot(disk: string, dir: string) {
  const b = bootBlock(disk, dir, { detachOnShutdown: true });
  return {
    store: b.store,
    async record() {
      await b.mounted();
      return (await waitForResource(b.store, PROVISIONING_RECORD, () => true, WAIT_MS)).spec;
    },
    shutdown: b.shutdown,
  };
}

function registerInnerTests(): void {
  Deno.test("a provisioned disk wiped by its record is re-provisioned and re-recorded on the next boot", async () => {
    const disk = await loopDisk(384 * MiB, [ESP]);
    try {
      const espBefore = await sha256File(disk.file, MiB, 32 * MiB);
      const first = boot(disk.dev, disk.dir);
      let record;
      try {
        record = await first.record();
        await Deno.writeTextFile(`${disk.dir}/var/marker`, "before reset\n");
      } finally {
        await first.shutdown();
      }
      const block = new NativeBlockBackend();
      const read = await block.readGpt(disk.dev);
      const targets = resetTargets(record, read?.table, 512);
      assert.deepEqual(targets.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
      const t0 = performance.now();
      const wiped = await wipeResetTargets(block, record, targets.map((t) => t.guid));
      console.log(
        `measured: wipe of STATE and EPHEMERAL in ${Math.round(performance.now() - t0)} ms`,
      );
      assert.equal(wiped.wiped.length, 2);
      const after = await block.readGpt(disk.dev);
      assert.deepEqual(after!.table.partitions.map((p) => p.name), ["EFI"]);
      for (const t of targets) {
        const head = await readAt(disk.file, t.firstLba * 512, MiB);
        assert.ok(head.every((b) => b === 0), `${t.label}'s first MiB is zero`);
      }

      // A reset reboots, and the booting kernel reads the new table. Here the
      // same kernel carries on: converge its view first (the wipe's own reread
      // may meet EBUSY while the first boot's lazy unmounts drain).
      await kernelSeesOnly(block, disk.dev, 1);
      const second = boot(disk.dev, disk.dir);
      try {
        const again = await second.record();
        const st = second.store.get(VOLUME_STATUS, "block", "STATE").spec;
        // `decision` is the latest reconcile's (a resync after the creation says
        // "leave"); `created` is set only by the boot that made the partition.
        assert.ok(st.created, `STATE was created again on this boot: ${JSON.stringify(st)}`);
        const old = new Set(targets.map((t) => t.guid));
        assert.equal(again.partitions.length, 2);
        assert.ok(again.partitions.every((p) => !old.has(p.uuid)), "new GUIDs recorded");
        assert.ok(!await have(`${disk.dir}/var/marker`), "the marker on /var is gone");
      } finally {
        await second.shutdown();
      }
      assert.equal(await sha256File(disk.file, MiB, 32 * MiB), espBefore, "ESP byte for byte");
    } finally {
      await disk.close();
    }
  });

  Deno.test("only the recorded partitions are wiped: a foreign partition on the disk keeps its bytes", async () => {
    const state: Part = {
      number: 2,
      type: PARTITION_TYPE.STATE,
      uuid: "5a5a5a5a-0000-4000-8000-000000000002",
      name: PARTITION_NAME.STATE,
      first: 33,
      mib: 100,
    };
    const eph: Part = {
      number: 3,
      type: PARTITION_TYPE.EPHEMERAL,
      uuid: "5a5a5a5a-0000-4000-8000-000000000003",
      name: PARTITION_NAME.EPHEMERAL,
      first: 133,
      mib: 100,
    };
    const data: Part = {
      number: 4,
      type: GPT_TYPE.LINUX_FILESYSTEM,
      uuid: "da7a0000-0000-4000-8000-000000000004",
      name: "DATA",
      first: 233,
      mib: 64,
    };
    const disk = await loopDisk(320 * MiB, [ESP, state, eph, data]);
    try {
      // On the image at the partitions' offsets (the CI kernel has no GPT parser).
      for (const p of [state, eph, data]) {
        const label = p === data ? "precious" : p.name;
        await run(
          "mkfs.ext4",
          "-q",
          "-F",
          "-L",
          label,
          "-E",
          `offset=${p.first * MiB}`,
          disk.file,
          `${p.mib * 1024}k`,
        );
      }
      const before = {
        esp: await sha256File(disk.file, MiB, 32 * MiB),
        data: await sha256File(disk.file, 233 * MiB, 64 * MiB),
      };
      const rec = (p: Part) => ({
        number: p.number,
        uuid: p.uuid,
        type: p.type,
        name: p.name,
        firstLba: p.first * 2048,
        lastLba: (p.first + p.mib) * 2048 - 1,
      });
      // The record also (wrongly) lists the ESP and DATA: neither may go.
      const record = {
        disk: disk.dev,
        diskGuid: "d15c0000-0000-4000-8000-00000000000e",
        partitions: [rec(ESP), rec(state), rec(eph), rec(data)],
      };
      const block = new NativeBlockBackend();
      const guids = [ESP, state, eph, data].map((p) => p.uuid);
      const r = await wipeResetTargets(block, record, guids);
      assert.deepEqual(r.wiped.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
      const after = await block.readGpt(disk.dev);
      assert.deepEqual(after!.table.partitions.map((p) => p.name), ["EFI", "DATA"]);
      assert.equal(await sha256File(disk.file, MiB, 32 * MiB), before.esp, "ESP unchanged");
      assert.equal(await sha256File(disk.file, 233 * MiB, 64 * MiB), before.data, "DATA unchanged");
      assert.equal(
        await run("blkid", "-s", "LABEL", "-o", "value", "-p", `${disk.dev}p4`),
        "precious",
      );
      const probe = await block.probe(disk.dev, 33 * MiB);
      assert.equal(probe, undefined, "no filesystem left where STATE was");
    } finally {
      await disk.close();
    }
  });

  Deno.test("a LUKS2 STATE is crypto-erased first: no key opens it, the ESP keeps its bytes", async () => {
    const state: Part = {
      number: 2,
      type: PARTITION_TYPE.STATE,
      uuid: "5a5a5a5a-0000-4000-8000-000000000012",
      name: PARTITION_NAME.STATE,
      first: 33,
      mib: 40,
    };
    const eph: Part = {
      ...state,
      number: 3,
      type: PARTITION_TYPE.EPHEMERAL,
      uuid: "5a5a5a5a-0000-4000-8000-000000000013",
      name: PARTITION_NAME.EPHEMERAL,
      first: 73,
    }; // deno-fmt-ignore
    const disk = await loopDisk(120 * MiB, [ESP, state, eph]);
    // The partition through its own loop device (the CI kernel has no GPT parser).
    const part = await run(
      "losetup",
      "-f",
      "--show",
      "-o",
      String(33 * MiB),
      "--sizelimit",
      String(40 * MiB),
      disk.file,
    ); // deno-fmt-ignore
    const keyDir = await Deno.makeTempDir({ prefix: "reset-keys-" });
    try {
      const crypt = new NativeCryptBackend({ process: nativeProcessBackend(), keyDir });
      const key = new TextEncoder().encode("first-key-123");
      await crypt.format(part, key, { slot: 0, pbkdf: TEST_PBKDF });
      assert.equal(await crypt.testKey(part, key), true);
      const espBefore = await sha256File(disk.file, MiB, 32 * MiB);
      const rec = (p: Part) => ({
        number: p.number,
        uuid: p.uuid,
        type: p.type,
        name: p.name,
        firstLba: p.first * 2048,
        lastLba: (p.first + p.mib) * 2048 - 1,
      }); // deno-fmt-ignore
      const record = { disk: disk.dev, diskGuid: "d15c0000-0000-4000-8000-00000000000e", partitions: [rec(state), rec(eph)] }; // deno-fmt-ignore
      const block = new NativeBlockBackend();
      const r = await wipeResetTargets(block, record, [state.uuid, eph.uuid], {
        crypt,
        partitionPath: (_disk, n) => n === state.number ? part : `${disk.dev}p${n}`,
      });
      assert.deepEqual(r.wiped.map((t) => t.label).sort(), ["EPHEMERAL", "STATE"]);
      assert.equal(await crypt.isLuks(part), false, "no LUKS header left");
      assert.equal(
        await crypt.testKey(part, key).catch(() => false),
        false,
        "the key opens nothing",
      );
      const head = await readAt(disk.file, 33 * MiB, 16 * MiB);
      assert.ok(head.every((b) => b === 0), "the header area is zero");
      assert.equal(await sha256File(disk.file, MiB, 32 * MiB), espBefore, "ESP byte for byte");
    } finally {
      await run("losetup", "-d", part).catch((e) => console.error(e));
      await Deno.remove(keyDir, { recursive: true });
      await disk.close();
    }
  });
}

/** Re-reads `dev`'s table until the kernel lists `count` partitions (bounded: 10 s). */
async function kernelSeesOnly(block: NativeBlockBackend, dev: string, count: number) {
  const name = dev.replace("/dev/", "");
  const listed = async () => {
    let n = 0;
    for await (const e of Deno.readDir(`/sys/class/block/${name}`)) {
      if (e.name.startsWith(name)) n++;
    }
    return n;
  };
  const deadline = performance.now() + 10_000;
  while (await listed() !== count) {
    if (performance.now() > deadline) {
      throw new Error(`the kernel still lists ${await listed()} partitions of ${dev}`);
    }
    await block.rereadPartitions(dev).catch(() => {});
    await new Promise((r) => setTimeout(r, 200));
  }
}
