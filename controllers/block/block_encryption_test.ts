/**
 * Encrypted STATE and EPHEMERAL through the block controllers, on fakes: a
 * FakeBlockBackend disk, a LinkedFakeCrypt whose headers show on that disk,
 * mkfs through FakeProcessBackend, mounts through FakeMountBackend. A
 * reboot is a new runtime and controllers over the same disk and headers.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { FakeBlockBackend } from "../../platform/block/mod.ts";
import { FakeMountBackend } from "../../platform/mount/mod.ts";
import { FakeProcessBackend } from "../../platform/process/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  MOUNT_STATUS,
  type ResourceSpecs,
  VOLUME_STATUS,
  type VolumeStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../../layout/mod.ts";
import {
  defineFakeMkfs,
  part,
  sequentialGuids,
  TEST_LAYOUT,
  writeFakeSysfs,
} from "./fake_disks.ts";
import { LinkedFakeCrypt } from "./fake_luks.ts";
import { blockControllers } from "./mod.ts";

const MiB = 1024 * 1024;
const DISK = "/dev/vda";
const UUID = "4c4c4544-0042-3510-8052-b4c04f564433";
const OTHER_BOARD = "9a1f2e3d-0000-4000-8000-00000000b0a2";
const PASS = "a long recovery passphrase";

const PLAIN = `  install:\n    disk: ${DISK}\n`;
const encrypted = (passphrase = PASS) =>
  PLAIN + `    encryption:
      state:
        keys:
          - { slot: 0, kind: nodeid }
          - { slot: 1, kind: static, passphrase: "${passphrase}" }
      ephemeral:
        keys:
          - { slot: 0, kind: nodeid }
`;

function config(install: string) {
  const r = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: n1\n${install}`, "t.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", bytes.slice());
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The disk, the headers and the temp dir: what survives a reboot. */
interface Machine {
  block: FakeBlockBackend;
  crypt: LinkedFakeCrypt;
  dir: string;
}

async function newMachine(): Promise<Machine> {
  const block = new FakeBlockBackend();
  block.addDisk(DISK, 64 * MiB);
  const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 8, "e5e5e5e5-0000-4000-8000-000000000001");
  await block.writeGpt(DISK, {
    diskGuid: "d15c0000-0000-4000-8000-000000000001",
    partitions: [esp],
  });
  const dir = await Deno.makeTempDir({ prefix: "block-crypt-" });
  await writeFakeSysfs(`${dir}/sys`, [{ name: "vda", size: 64 * MiB }]);
  return { block, crypt: new LinkedFakeCrypt(block, [DISK]), dir };
}

/** One boot of the node: fresh store, runtime, mounts, processes and events. */
async function boot(m: Machine, install: string, smbiosUuid = UUID) {
  const mounts = new FakeMountBackend();
  const process = new FakeProcessBackend();
  const events = new EventBus();
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  const ptr = { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID } as const;
  await store.modify(ptr, "test", () => ({ source: "test", config: config(install) }));
  defineFakeMkfs(process, m.block, [DISK]);
  const controllers = blockControllers({
    block: m.block,
    mounts,
    process,
    events,
    crypt: m.crypt,
    keys: { smbiosUuid: () => Promise.resolve(smbiosUuid) },
    sysfsRoot: `${m.dir}/sys`,
    resyncInterval: 50,
    stateMountPoint: `${m.dir}/system/state`,
    ephemeralMountPoint: `${m.dir}/var`,
    layout: TEST_LAYOUT,
    waitForDevice: () => Promise.resolve(),
    resolveDevice: (p: string) => Promise.resolve(p),
    mkdir: async (p: string) => {
      await Deno.mkdir(p, { recursive: true });
      mounts.addDirectory(p);
    },
    newGuid: sequentialGuids(),
  });
  for (const c of controllers) runtime.register(c);
  runtime.start();
  return {
    store,
    mounts,
    process,
    events,
    status: (id: string, pred: (s: VolumeStatusSpec) => boolean) =>
      waitForResource(store, VOLUME_STATUS, (r) => r.metadata.id === id && pred(r.spec)),
    mounted: (id: string) =>
      waitForResource(store, MOUNT_STATUS, (r) => r.metadata.id === id && r.spec.mounted),
    async shutdown() {
      await runtime.stop();
      await m.crypt.reboot();
    },
  };
}

/** Everything a boot could change: the disk's bytes and every LUKS2 header. */
/** A first boot with encryption configured: both volumes formatted, opened and mounted; then shut down. */
async function provisionEncrypted(m: Machine): Promise<void> {
  const first = await boot(m, encrypted());
  await first.mounted("STATE");
  await first.mounted("EPHEMERAL");
  await first.shutdown();
}

async function diskState(m: Machine): Promise<string> {
  const headers = [...m.crypt.headers].map(([d, h]) => [d, [...h.keys], [...h.tokens]]);
  return `${await sha256(m.block.bytes(DISK))} ${JSON.stringify(headers)}`;
}

Deno.test("a blank volume is encrypted (LUKS2, each key in its slot) and mounted on its mapping", async () => {
  const m = await newMachine();
  const n = await boot(m, encrypted());
  try {
    const state = await n.mounted("STATE");
    const eph = await n.mounted("EPHEMERAL");
    assert.equal(state.spec.source, "/dev/mapper/STATE");
    assert.equal(eph.spec.source, "/dev/mapper/EPHEMERAL");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.equal(vs.encrypted, true);
    assert.equal(vs.mappingPath, "/dev/mapper/STATE");
    assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "nodeid" });
    assert.equal(vs.locked, false);
    assert.equal(vs.filesystem, "ext4");
    assert.equal(vs.partitionPath, "/dev/vda2");
    assert.doesNotMatch(JSON.stringify(vs), new RegExp(PASS));
    assert.deepEqual((await m.crypt.dump("/dev/vda2")).slots, [
      { slot: 0, kind: "nodeid" },
      { slot: 1, kind: "static" },
    ]);
    assert.deepEqual((await m.crypt.dump("/dev/vda3")).slots, [{ slot: 0, kind: "nodeid" }]);
    // mkfs ran on the mappings, never on the partitions.
    const targets = n.process.processes.map((p) => p.spec.argv.at(-1));
    assert.deepEqual(targets, ["/dev/mapper/STATE", "/dev/mapper/EPHEMERAL"]);
    // The partition starts with the LUKS2 magic, not a filesystem.
    const head = m.block.bytes(DISK).subarray(9 * MiB, 9 * MiB + 6);
    assert.deepEqual([...head], [0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe]);
    const actions = n.events.history().filter((e) => e.subject === "volume STATE");
    assert.deepEqual(actions.map((e) => e.action), ["encrypted"]);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a reboot unlocks by nodeid, opens the same mapping and writes nothing", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, encrypted());
  try {
    const state = await n.mounted("STATE");
    assert.equal(state.spec.source, "/dev/mapper/STATE");
    await n.mounted("EPHEMERAL");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 0, kind: "nodeid" });
    assert.equal(vs.decision, "leave");
    assert.deepEqual(n.process.processes, [], "no mkfs on a reboot");
    assert.equal(await diskState(m), before);
    const unlocked = n.events.history().filter((e) => e.action === "unlocked");
    assert.deepEqual(unlocked.map((e) => e.subject).sort(), ["volume EPHEMERAL", "volume STATE"]);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("another board opens STATE by its static passphrase", async () => {
  const m = await newMachine();
  const first = await boot(m, encrypted());
  await first.mounted("STATE");
  await first.shutdown();
  const n = await boot(m, encrypted(), OTHER_BOARD);
  try {
    await n.mounted("STATE");
    const vs = (await n.status("STATE", (s) => s.phase === "ready")).spec;
    assert.deepEqual(vs.unlockedBy, { slot: 1, kind: "static" });
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("no configured key opens the header: locked, an event, nothing written, nothing mounted", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, encrypted("not the passphrase at all"), OTHER_BOARD);
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "locked")).spec;
    assert.equal(vs.locked, true);
    assert.equal(vs.encrypted, true);
    assert.equal(vs.mappingPath, "");
    assert.equal(vs.unlockedBy, null);
    assert.equal(vs.error?.code, "locked");
    assert.match(
      vs.lockedReason,
      /slot 0 \(nodeid\): did not open; slot 1 \(static\): did not open/,
    );
    assert.doesNotMatch(JSON.stringify(vs), /not the passphrase/);
    await n.status("EPHEMERAL", (s) => s.phase === "locked");
    const locked = n.events.history().filter((e) => e.action === "locked");
    assert.equal(locked.length, 2);
    assert.equal(m.crypt.mapped.size, 0);
    assert.equal(await diskState(m), before, "the disk and headers are unchanged");
    assert.deepEqual(n.process.processes, []);
    const st = await waitForResource(n.store, MOUNT_STATUS, (r) => r.metadata.id === "STATE");
    assert.equal(st.spec.mounted, false);
    assert.match(st.spec.message, /waiting for volume STATE \(locked\)/);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a plain filesystem where encryption is configured: refused, never converted", async () => {
  const m = await newMachine();
  const first = await boot(m, PLAIN);
  await first.mounted("STATE");
  await first.mounted("EPHEMERAL");
  await first.shutdown();
  const before = await diskState(m);
  const n = await boot(m, encrypted());
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "failed")).spec;
    assert.equal(vs.error?.code, "plain-filesystem");
    assert.equal(vs.encrypted, false);
    assert.match(vs.error?.message ?? "", /never converted in place/);
    await n.status("EPHEMERAL", (s) => s.error?.code === "plain-filesystem");
    assert.equal(m.crypt.headers.size, 0);
    assert.deepEqual(n.process.processes, []);
    assert.equal(await diskState(m), before);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("a LUKS2 header where no encryption is configured: refused (not-configured), unchanged", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  const before = await diskState(m);
  const n = await boot(m, PLAIN);
  try {
    const vs = (await n.status("STATE", (s) => s.phase === "failed")).spec;
    assert.equal(vs.error?.code, "not-configured");
    assert.equal(vs.encrypted, true);
    assert.deepEqual(n.process.processes, []);
    assert.equal(await diskState(m), before);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});

Deno.test("an opened mapping that reads zeros (mkfs cut short) gets its filesystem; other data is left alone", async () => {
  const m = await newMachine();
  await provisionEncrypted(m);
  m.crypt.plaintext("/dev/vda2").fill(0, 0, 64 * 1024); // the format stopped before mkfs
  m.crypt.plaintext("/dev/vda3").fill(0x5a, 0, 64 * 1024); // not a filesystem, not zero
  const ephBefore = await sha256(m.crypt.plaintext("/dev/vda3"));
  const n = await boot(m, encrypted());
  try {
    await n.mounted("STATE");
    const eph = (await n.status("EPHEMERAL", (s) => s.phase === "failed")).spec;
    assert.equal(eph.error?.code, "unrecognized-data");
    assert.equal(eph.mappingPath, "/dev/mapper/EPHEMERAL");
    assert.deepEqual(n.process.processes.map((p) => p.spec.argv.at(-1)), ["/dev/mapper/STATE"]);
    assert.equal(await sha256(m.block.bytes("/dev/mapper/EPHEMERAL")), ephBefore);
  } finally {
    await n.shutdown();
    await Deno.remove(m.dir, { recursive: true });
  }
});
