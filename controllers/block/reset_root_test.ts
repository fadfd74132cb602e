/**
 * Privileged: a reset's wipe on real loop devices, in a private mount
 * namespace (as block_root_test.ts). A disk provisioned by the block
 * controllers is wiped by the record they wrote, and the next "boot" (a new
 * store and runtime) re-provisions it, with new GUIDs, a new record, the
 * marker on /var gone and the ESP byte for byte; on a disk that also holds a
 * foreign partition, only the recorded partitions go and the foreign one
 * keeps its bytes.
 */
import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { encodeGpt, GPT_TYPE, NativeBlockBackend } from "../../platform/block/mod.ts";
import { NativeMountBackend } from "../../platform/mount/mod.ts";
import { nativeProcessBackend } from "../../platform/process/mod.ts";
import {
  assertNotHostNamespace,
  insideTestNamespace,
  rerunInNamespace,
} from "../../platform/rerun_in_namespace.ts";
import {
  isStateMounted,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  MOUNT_STATUS,
  PROVISIONING_RECORD,
  type ResourceSpecs,
  VOLUME_STATUS,
} from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "./layout.ts";
import { blockControllers } from "./mod.ts";
import { runCommand } from "./run_command.ts";
import { resetTargets, wipeResetTargets } from "./reset_plan.ts";

const MiB = 1024 * 1024;
const WAIT_MS = 60_000;
const tools = ["/usr/sbin/losetup", "/usr/sbin/mkfs.ext4", "/usr/sbin/blkid", "/usr/sbin/mkfs.fat"];
const have = async (p: string) => await Deno.stat(p).then(() => true, () => false);
const addon = new URL("../../native-ops/machined_native_ops.node", import.meta.url);
const missing = [];
for (const t of tools) if (!await have(t)) missing.push(t);
if (!await have(addon.pathname)) missing.push("native-ops addon");
const skip = Deno.uid() !== 0 ? "not root" : missing.length ? `missing ${missing.join(", ")}` : "";

if (!insideTestNamespace("block-reset")) {
  if (skip) console.log(`skipping reset root tests: ${skip}`);
  Deno.test({
    name: "reset wipe on loop devices, in a private mount namespace " +
      "(needs root, the native addon, losetup, mkfs.ext4, mkfs.fat, blkid)",
    ignore: skip !== "",
    fn: async () => {
      const r = await rerunInNamespace(
        "block-reset",
        ["--mount", "--propagation", "private"],
        import.meta.url,
        { timeoutMs: 300_000 },
      );
      console.log(
        r.output.split("\n").filter((l) => / \.\.\. |passed|measured/.test(l)).join("\n"),
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /\| 2 passed \| 0 failed \(/, "all ran: none failed or ignored");
    },
  });
} else {
  assertNotHostNamespace("mnt");
  registerInnerTests();
}

const proc = () => nativeProcessBackend();
const run = async (...argv: string[]) => (await runCommand(proc(), argv)).stdout.trim();

async function sha256File(path: string, offset: number, length: number): Promise<string> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(length);
  for (let got = 0; got < length;) got += (await f.read(buf.subarray(got))) ?? length;
  const d = await crypto.subtle.digest("SHA-256", buf);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function readAt(path: string, offset: number, length: number): Promise<Uint8Array> {
  using f = await Deno.open(path, { read: true });
  await f.seek(offset, Deno.SeekMode.Start);
  const buf = new Uint8Array(length);
  for (let got = 0; got < length;) got += (await f.read(buf.subarray(got))) ?? length;
  return buf;
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
async function loopDisk(size: number, parts: Part[]) {
  const dir = await Deno.makeTempDir({ prefix: "reset-root-" });
  const file = `${dir}/disk.img`;
  {
    using f = await Deno.open(file, { create: true, write: true });
    await f.truncate(size);
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
    for (const w of writes) {
      await f.seek(w.offset, Deno.SeekMode.Start);
      for (let off = 0; off < w.data.length;) off += await f.write(w.data.subarray(off));
    }
  }
  await run("mkfs.fat", "-F", "32", "-n", "EFI", "--offset", "2048", file, String(32 * 1024));
  const dev = await run("losetup", "-f", "--show", "-P", file);
  return {
    dir,
    file,
    dev,
    async close() {
      await run("losetup", "-d", dev).catch((e) => console.error(e));
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const ESP: Part = {
  number: 1,
  type: PARTITION_TYPE.EFI_SYSTEM,
  uuid: "e5e5e5e5-0000-4000-8000-000000000001",
  name: PARTITION_NAME.EFI,
  first: 1,
  mib: 32,
};

/** One "boot" of the block controllers on real backends. */
function boot(disk: string, dir: string) {
  const store = new Store<ResourceSpecs>();
  const events = new EventBus();
  const runtime = new ControllerRuntime(store);
  const mounts = new NativeMountBackend();
  for (
    const c of blockControllers({
      block: new NativeBlockBackend(),
      mounts,
      process: proc(),
      events,
      resyncInterval: 2_000,
      stateMountPoint: `${dir}/system/state`,
      ephemeralMountPoint: `${dir}/var`,
    })
  ) runtime.register(c);
  const parsed = parseMachineConfig(
    `version: v1alpha1\nmachine:\n  hostname: n1\n  install:\n    disk: ${disk}\n`,
    "t.yaml",
  );
  if (!parsed.ok) throw new Error("bad test config");
  store.create({
    type: MACHINE_CONFIG,
    namespace: "config",
    id: MACHINE_CONFIG_ID,
    spec: { source: "test", config: parsed.config },
    owner: "test",
  });
  runtime.start();
  return {
    store,
    async record() {
      await waitForResource(store, MOUNT_STATUS, (r) => isStateMounted(r.spec), WAIT_MS);
      await waitForResource(
        store,
        MOUNT_STATUS,
        (r) => r.metadata.id === "EPHEMERAL" && r.spec.mounted,
        WAIT_MS,
      );
      return (await waitForResource(store, PROVISIONING_RECORD, () => true, WAIT_MS)).spec;
    },
    async shutdown() {
      await runtime.stop();
      for (const target of [`${dir}/var`, `${dir}/system/state`]) {
        if ((await mounts.mounts()).some((m) => m.mountPoint === target)) {
          await mounts.unmount(target, { detach: true });
        }
      }
    },
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
