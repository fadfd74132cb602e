/**
 * The block controllers end to end on fakes: a fake sysfs tree, a
 * FakeBlockBackend disk, mkfs through FakeProcessBackend (writing real
 * superblocks into the fake disk), mounts through FakeMountBackend.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import {
  FakeBlockBackend,
  GPT_TYPE,
  type GptTable,
  imageReader,
  readGpt,
} from "../../platform/block/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import { FakeProcessBackend } from "../../platform/process/mod.ts";
import {
  DISCOVERED_VOLUME,
  DISK_STATUS,
  isStateMounted,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  MOUNT_STATUS,
  PROVISIONING_RECORD,
  type ResourceSpecs,
  VOLUME_SPEC,
  VOLUME_STATUS,
  type VolumePhase,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForAbsence, waitForResource } from "../../runtime/testing.ts";
import {
  defineFakeMkfs,
  ext4Head,
  part,
  sequentialGuids,
  TEST_LAYOUT,
  writeFakeSysfs,
} from "./fake_disks.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import { blockControllers } from "./mod.ts";
import { partitionsResetMayFormat } from "./reset_may_format.ts";

const MiB = 1024 * 1024;
const DISK = "/dev/vda";
const DISK_SIZE = 64 * MiB;

function config(install: string) {
  const r = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: n1\n${install}`, "t.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

const INSTALL = `  install:\n    disk: ${DISK}\n`;
const INSTALL_WIPE = `  install:\n    disk: ${DISK}\n    wipe: true\n`;

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes.slice());
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function gptOf(block: FakeBlockBackend, disk = DISK): Promise<GptTable | undefined> {
  const b = block.bytes(disk);
  return (await readGpt(imageReader(b), b.length, 512))?.table;
}

/** A fresh store, runtime, fakes and temp dirs; `start()` registers the block controllers. */
async function setup(
  options: {
    sysfs?: Parameters<typeof writeFakeSysfs>[1];
    /** Reuse a disk and a directory: a second boot. */
    block?: FakeBlockBackend;
    dir?: string;
  } = {},
) {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "block-ctl-" });
  const block = options.block ?? new FakeBlockBackend();
  const mounts = new FakeMountBackend();
  const process = new FakeProcessBackend();
  const events = new EventBus();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const phases: Record<string, VolumePhase[]> = { STATE: [], EPHEMERAL: [] };
  const watch = store.watch(VOLUME_STATUS);
  const collecting = (async () => {
    for await (const ev of watch) {
      if (ev.kind !== "created" && ev.kind !== "updated") continue;
      const list = phases[ev.resource.metadata.id];
      if (list.at(-1) !== ev.resource.spec.phase) list.push(ev.resource.spec.phase);
    }
  })();
  await writeFakeSysfs(`${dir}/sys`, options.sysfs ?? [{ name: "vda", size: DISK_SIZE }]);
  const deps = {
    block,
    mounts,
    process,
    events,
    sysfsRoot: `${dir}/sys`,
    devRoot: "/dev",
    resyncInterval: 50,
    stateMountPoint: `${dir}/system/state`,
    ephemeralMountPoint: `${dir}/var`,
    layout: TEST_LAYOUT,
    waitForDevice: () => Promise.resolve(),
    resolveDevice: (p: string) => Promise.resolve(p),
    mkdir: async (p: string) => {
      await Deno.mkdir(p, { recursive: true });
      mounts.addDirectory(p);
    },
    newGuid: sequentialGuids(),
  };
  return {
    dir,
    block,
    mounts,
    process,
    events,
    store,
    phases,
    setConfig(install: string) {
      const ptr = { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID } as const;
      return store.modify(ptr, "test", () => ({ source: "test", config: config(install) }));
    },
    start() {
      defineFakeMkfs(process, block, [DISK, "/dev/vdb"]);
      for (const c of blockControllers(deps)) runtime.register(c);
      runtime.start();
    },
    async stop(keepDir = false) {
      await runtime.stop();
      watch.close();
      await collecting;
      if (!keepDir) await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Lay down what the imager writes: a GPT with the ESP ("EFI") at 1 MiB, filled with bytes. */
async function flashImage(block: FakeBlockBackend, withSlots = false): Promise<void> {
  block.addDisk(DISK, DISK_SIZE);
  const partitions = [part(1, T.EFI_SYSTEM, N.EFI, 1, 8, "e5e5e5e5-0000-4000-8000-000000000001")];
  if (withSlots) {
    partitions.push(part(2, T.BOOT_SLOT, N.BOOT_A, 9, 4), part(3, T.BOOT_SLOT, N.BOOT_B, 13, 4));
  }
  await block.writeGpt(DISK, { diskGuid: "d15c0000-0000-4000-8000-000000000001", partitions });
  const b = block.bytes(DISK);
  for (let i = MiB; i < 9 * MiB; i += 4096) b[i] = (i >> 12) & 0xff;
  if (withSlots) b.fill(0xab, 9 * MiB, 17 * MiB);
}

const bootBytes = (block: FakeBlockBackend, end = 9 * MiB) => block.bytes(DISK).slice(MiB, end);

Deno.test("a freshly flashed image is completed: STATE + EPHEMERAL appended, formatted, mounted, recorded", async () => {
  const t = await setup();
  try {
    await flashImage(t.block);
    const espBefore = await sha256(bootBytes(t.block));
    const espEntry = (await gptOf(t.block))!.partitions[0];
    await t.setConfig(INSTALL);
    t.start();
    const stateMount = await waitForResource(t.store, MOUNT_STATUS, (r) => isStateMounted(r.spec));
    await waitForResource(
      t.store,
      MOUNT_STATUS,
      (r) => r.metadata.id === "EPHEMERAL" && r.spec.mounted,
    );
    assert.equal(stateMount.spec.target, `${t.dir}/system/state`);

    const gpt = (await gptOf(t.block))!;
    assert.deepEqual(gpt.partitions[0], espEntry, "the ESP's entry is unchanged");
    assert.equal(await sha256(bootBytes(t.block)), espBefore, "the ESP's bytes are unchanged");
    assert.deepEqual(gpt.partitions.map((p) => [p.number, p.name, p.type]), [
      [1, "EFI", T.EFI_SYSTEM],
      [2, "STATE", T.STATE],
      [3, "EPHEMERAL", T.EPHEMERAL],
    ]);
    assert.equal(gpt.partitions[1].firstLba, 9 * 2048);
    assert.equal(gpt.diskGuid, "d15c0000-0000-4000-8000-000000000001");

    assert.deepEqual(t.process.processes.map((p) => p.spec.argv), [
      [
        "mkfs.ext4",
        "-F",
        "-q",
        "-L",
        "STATE",
        "-E",
        "lazy_itable_init=1,lazy_journal_init=1",
        "/dev/vda2",
      ],
      [
        "mkfs.ext4",
        "-F",
        "-q",
        "-L",
        "EPHEMERAL",
        "-E",
        "lazy_itable_init=1,lazy_journal_init=1",
        "/dev/vda3",
      ],
    ]);
    const mounted = t.mounts.table.slice(1).map((
      m,
    ) => [m.source, m.mountPoint, m.fstype, m.options]);
    assert.deepEqual(mounted, [
      ["/dev/vda2", `${t.dir}/system/state`, "ext4", ["rw", "nosuid", "nodev", "noexec"]],
      ["/dev/vda3", `${t.dir}/var`, "ext4", ["rw", "nosuid", "nodev"]],
    ]);
    assert.deepEqual(t.phases.STATE, ["provisioning", "formatting", "ready"]);
    // The next pass finds machined's layout and leaves it; the status still says what acted.
    const status = await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.metadata.id === "STATE" && r.spec.phase === "ready" && r.spec.decision === "leave",
    );
    assert.match(status.spec.message, /already has machined's layout/);
    assert.equal(status.spec.acted?.decision, "complete");
    assert.ok(
      Math.abs(Date.parse(status.spec.acted!.at) - Date.now()) < 60_000,
      status.spec.acted!.at,
    );

    const rec = await waitForResource(t.store, PROVISIONING_RECORD, () => true);
    assert.deepEqual(rec.spec.partitions.map((p) => p.uuid), [
      gpt.partitions[1].uuid,
      gpt.partitions[2].uuid,
    ]);
    const onDisk = JSON.parse(await Deno.readTextFile(`${t.dir}/system/state/provisioned.json`));
    assert.equal(onDisk.diskGuid, gpt.diskGuid);
    assert.deepEqual(
      partitionsResetMayFormat(rec.spec, gpt).map((p) => p.name),
      ["STATE", "EPHEMERAL"],
      "a reset may format exactly what was created, never the ESP",
    );

    const disk = await waitForResource(t.store, DISK_STATUS, (r) => r.spec.layout === "machined");
    assert.equal(disk.spec.partitionTable, "gpt");
    const vol = await waitForResource(
      t.store,
      DISCOVERED_VOLUME,
      (r) => r.metadata.id === "vda2" && r.spec.filesystem === "ext4",
    );
    assert.equal(vol.spec.filesystemLabel, "STATE");
    assert.equal(vol.spec.role, "state");
    assert.ok(t.events.history().some((e) => e.action === "complete"));
  } finally {
    await t.stop();
  }
});

Deno.test("an image with A/B slot partitions keeps both slots byte for byte", async () => {
  const t = await setup();
  try {
    await flashImage(t.block, true);
    const before = await sha256(bootBytes(t.block, 17 * MiB));
    await t.setConfig(INSTALL);
    t.start();
    await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.metadata.id === "EPHEMERAL" && r.spec.phase === "ready",
    );
    assert.equal(await sha256(bootBytes(t.block, 17 * MiB)), before);
    const gpt = (await gptOf(t.block))!;
    assert.deepEqual(gpt.partitions.map((p) => p.name), [
      "EFI",
      "BOOT-A",
      "BOOT-B",
      "STATE",
      "EPHEMERAL",
    ]);
  } finally {
    await t.stop();
  }
});

Deno.test("a disk with a foreign filesystem is refused and untouched, until the config says wipe", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE);
    t.block.bytes(DISK).set(ext4Head("data", "0a0b0c0d-0e0f-4011-8213-141516171819"));
    t.block.bytes(DISK).fill(0x5a, 2 * MiB, 3 * MiB);
    const before = await sha256(t.block.bytes(DISK));
    await t.setConfig(INSTALL);
    t.start();
    const st = await waitForResource(t.store, VOLUME_STATUS, (r) => r.spec.phase === "failed");
    assert.equal(st.spec.decision, "refuse");
    assert.equal(st.spec.error?.code, "foreign-data");
    assert.match(
      st.spec.error!.message,
      /a whole-disk ext4 filesystem; set machine\.install\.wipe/,
    );
    await waitForResource(t.store, DISK_STATUS, (r) => r.spec.layout === "foreign");
    assert.equal(await sha256(t.block.bytes(DISK)), before, "not one byte changed");
    assert.deepEqual(t.block.faults.callsOf("write"), []);
    assert.deepEqual(t.block.faults.callsOf("writeGpt"), []);
    assert.equal(t.process.processes.length, 0);
    assert.equal(t.mounts.table.length, 1);

    await t.setConfig(INSTALL_WIPE);
    await waitForResource(t.store, MOUNT_STATUS, (r) => isStateMounted(r.spec));
    const gpt = (await gptOf(t.block))!;
    assert.deepEqual(gpt.partitions.map((p) => p.name), ["STATE", "EPHEMERAL"]);
    assert.ok(t.phases.STATE.includes("failed") && t.phases.STATE.at(-1) === "ready");
  } finally {
    await t.stop();
  }
});

Deno.test("wiping a disk with foreign partitions keeps its ESP", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE);
    await t.block.writeGpt(DISK, {
      diskGuid: "d15c0000-0000-4000-8000-000000000002",
      partitions: [
        part(1, T.EFI_SYSTEM, "ESP", 1, 8),
        part(2, GPT_TYPE.LINUX_FILESYSTEM, "root", 9, 40),
      ],
    });
    t.block.bytes(DISK).fill(0x77, MiB, 9 * MiB);
    t.block.bytes(DISK).set(ext4Head("root", "0a0b0c0d-0e0f-4011-8213-141516171819"), 9 * MiB);
    const esp = await sha256(bootBytes(t.block));
    await t.setConfig(INSTALL_WIPE);
    t.start();
    await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.metadata.id === "EPHEMERAL" && r.spec.phase === "ready",
    );
    assert.equal(await sha256(bootBytes(t.block)), esp);
    const gpt = (await gptOf(t.block))!;
    assert.deepEqual(gpt.partitions.map((p) => [p.number, p.name]), [[1, "ESP"], [2, "STATE"], [
      3,
      "EPHEMERAL",
    ]]);
    assert.ok(
      t.events.history().some((e) => e.action === "wipe" && /keeping boot/.test(e.message)),
    );
  } finally {
    await t.stop();
  }
});

Deno.test("a read-only disk is refused", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE, { readOnly: true });
    await t.setConfig(INSTALL_WIPE);
    t.start();
    const st = await waitForResource(t.store, VOLUME_STATUS, (r) => r.spec.phase === "failed");
    assert.equal(st.spec.error?.code, "read-only");
  } finally {
    await t.stop();
  }
});

Deno.test("encryption asked for without a LUKS2 backend is refused, not made plain", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE);
    const before = await sha256(t.block.bytes(DISK));
    await t.setConfig(
      INSTALL + "    encryption:\n      state:\n        keys:\n" +
        "          - { slot: 0, kind: static, passphrase: correct-horse-battery }\n",
    );
    t.start();
    const st = await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.metadata.id === "STATE" && r.spec.phase === "failed",
    );
    assert.equal(st.spec.error?.code, "no-crypt-backend");
    assert.match(
      st.spec.message,
      /encryption is set for STATE.*no LUKS2 backend.*nothing was written/,
    );
    assert.ok(!JSON.stringify(st.spec).includes("correct-horse"));
    assert.equal(await sha256(t.block.bytes(DISK)), before, "the disk is untouched");
    assert.deepEqual(t.process.processes, [], "no mkfs ran");
  } finally {
    await t.stop();
  }
});

Deno.test("a missing disk waits, and is provisioned when it appears (rescan)", async () => {
  const t = await setup({ sysfs: [] });
  try {
    await t.setConfig(INSTALL);
    t.start();
    const st = await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.spec.error?.code === "missing",
    );
    assert.equal(st.spec.phase, "waiting");
    t.block.addDisk(DISK, DISK_SIZE);
    await writeFakeSysfs(`${t.dir}/sys`, [{ name: "vda", size: DISK_SIZE }]);
    await waitForResource(t.store, MOUNT_STATUS, (r) => isStateMounted(r.spec));
    const actions = t.events.history().map((e) => e.action);
    assert.deepEqual(actions.slice(0, 2), ["refuse", "create"]);
  } finally {
    await t.stop();
  }
});

Deno.test("mkfs failing leaves the partition blank; the retry formats it (leave + format)", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE);
    t.process.faults.failNext("spawn", "EIO", {
      when: (args) => (args[0] as { argv: string[] }).argv.at(-1) === "/dev/vda2",
    });
    await t.setConfig(INSTALL);
    t.start();
    const failed = await waitForResource(t.store, VOLUME_STATUS, (r) => r.spec.phase === "failed");
    assert.equal(failed.spec.error?.code, "EIO");
    assert.match(failed.spec.error!.message, /Cannot format "\/dev\/vda2"/);
    const ready = await waitForResource(
      t.store,
      VOLUME_STATUS,
      (r) => r.metadata.id === "EPHEMERAL" && r.spec.phase === "ready",
    );
    assert.equal(ready.spec.decision, "leave");
    assert.equal(ready.spec.acted?.decision, "leave", "the retry that formatted acted last");
    assert.equal(t.block.faults.callsOf("writeGpt").length, 1, "the table was written once");
    assert.ok(ready.spec.created, "still known as created by this boot");
  } finally {
    await t.stop();
  }
});

Deno.test("a disk already provisioned is left alone: no writes, no mkfs; the record survives", async () => {
  const t = await setup();
  let record;
  try {
    await flashImage(t.block);
    await t.setConfig(INSTALL);
    t.start();
    record = (await waitForResource(t.store, PROVISIONING_RECORD, () => true)).spec;
  } finally {
    await t.stop(true);
  }
  // A second boot over the same disk and STATE directory.
  const t2 = await setup({ block: t.block, dir: t.dir });
  try {
    const writesBefore = t.block.faults.callsOf("write").length;
    const tablesBefore = t.block.faults.callsOf("writeGpt").length;
    await t2.setConfig(INSTALL_WIPE);
    t2.start();
    await waitForResource(
      t2.store,
      MOUNT_STATUS,
      (r) => r.metadata.id === "EPHEMERAL" && r.spec.mounted,
    );
    const again = await waitForResource(t2.store, PROVISIONING_RECORD, () => true);
    assert.deepEqual(again.spec, record, "read back from STATE unchanged");
    const st = t2.store.get(VOLUME_STATUS, "block", "STATE").spec;
    assert.equal(st.decision, "leave");
    assert.equal(st.created, null, "not created by this boot");
    assert.equal(st.acted, null, "nothing acted on the disk in this boot");
    assert.equal(t.block.faults.callsOf("write").length, writesBefore);
    assert.equal(t.block.faults.callsOf("writeGpt").length, tablesBefore);
    assert.equal(t2.process.processes.length, 0);
  } finally {
    await t2.stop();
  }
});

Deno.test("no machine.install: no volumes, but disks are still discovered", async () => {
  const t = await setup();
  try {
    t.block.addDisk(DISK, DISK_SIZE);
    await t.setConfig("");
    t.start();
    const d = await waitForResource(t.store, DISK_STATUS, (r) => r.metadata.id === "vda");
    assert.equal(d.spec.layout, "blank");
    assert.equal(t.store.list(VOLUME_SPEC).length, 0);
    await t.setConfig(INSTALL);
    await waitForResource(t.store, VOLUME_SPEC, (r) => r.metadata.id === "STATE");
    await t.setConfig("");
    await waitForAbsence(t.store, VOLUME_SPEC, () => true);
  } finally {
    await t.stop();
  }
});
