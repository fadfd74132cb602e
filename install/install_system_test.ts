import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { encodeGpt, FakeBlockBackend } from "../platform/block/mod.ts";
import { FakeMountBackend } from "../platform/mount/mod.ts";
import { gatherDiskFacts } from "../controllers/block/mod.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "../layout/mod.ts";
import { bootDiskOf } from "./boot_medium.ts";
import { type BootMedium, decideInstall } from "./decide_install.ts";
import { installSystem, InstallVerifyError } from "./install_system.ts";

const MiB = 1024 * 1024;
const hex = (b: string) => createHash("sha256").update(b).digest("hex");

/** Two fake disks (boot with an ESP of 4 MiB at 1 MiB holding a pattern, a blank target) and both ESPs' trees. */
async function setup() {
  const tmp = await Deno.makeTempDir();
  const boot = join(tmp, "vda"), target = join(tmp, "vdb");
  const block = new FakeBlockBackend();
  block.addDisk(boot, 64 * MiB);
  block.addDisk(target, 64 * MiB);
  const esp = { number: 1, firstLba: 2048, lastLba: 2048 + 4 * 2048 - 1 };
  for (
    const w of encodeGpt(
      {
        diskGuid: "11111111-2222-4333-8444-555555555555",
        partitions: [{
          ...esp,
          type: PARTITION_TYPE.EFI_SYSTEM,
          uuid: "21111111-2222-4333-8444-555555555555",
          name: PARTITION_NAME.EFI,
          attributes: 0n,
        }],
      },
      64 * MiB,
      512,
    )
  ) block.bytes(boot).set(w.data, w.offset);
  // The ESP's second and third MiB are free space (zeros); the target holds old bytes where
  // the third lands: the second is skipped (zero on both), the third written.
  const pattern = new Uint8Array(4 * MiB).map((_, i) =>
    i >= MiB && i < 3 * MiB ? 0 : (i * 7) & 0xff
  );
  block.bytes(target).fill(0x5a, 3 * MiB, 4 * MiB);
  block.bytes(boot).set(pattern, MiB);
  await Deno.writeFile(join(tmp, "vdb1"), new Uint8Array()); // the new ESP's device node
  const work = join(tmp, "work");
  const mount = new FakeMountBackend();
  for (const side of ["boot-esp", "target-esp"]) {
    const d = join(work, side);
    mount.addDirectory(d);
    await Deno.mkdir(join(d, "A"), { recursive: true });
    await Deno.mkdir(join(d, "loader/entries"), { recursive: true });
    await Deno.writeTextFile(join(d, "A/root.img"), "root image");
    await Deno.writeTextFile(join(d, "A/vmlinuz"), "kernel");
    await Deno.writeTextFile(
      join(d, "loader/entries/machined-a.conf"),
      `linux /A/vmlinuz\noptions quiet machined.slot=A machined.root.sha256=${hex("root image")}\n`,
    );
  }
  const medium: BootMedium = { disk: boot, esp };
  const facts = await gatherDiskFacts(block, target, { mountedSources: new Set(), zeroBytes: MiB });
  const d = decideInstall({
    install: { disk: target, wipe: false, system: true },
    target: facts,
    boot: medium,
    minFree: 8 * MiB,
  });
  assert.equal(d.action, "install");
  if (d.action !== "install") throw new Error("unreachable");
  return { tmp, block, mount, work, medium, target, d, pattern };
}

Deno.test("install: the boot ESP's bytes at 1 MiB of the target, a new GPT, every file checked", async () => {
  const s = await setup();
  try {
    const r = await installSystem(
      { block: s.block, mount: s.mount, workDir: s.work, chunk: MiB },
      s.medium,
      s.target,
      s.d,
    );
    assert.deepEqual(s.block.bytes(s.target).subarray(MiB, 5 * MiB), s.pattern);
    assert.equal(r.unchangedZeroBytes, MiB, "the free MiB, zero on both, was not rewritten");
    assert.equal(r.copiedBytes, 3 * MiB);
    const gpt = await s.block.readGpt(s.target);
    assert.deepEqual(gpt?.table, s.d.plan.table);
    assert.equal(r.espPartition, join(s.tmp, "vdb1"));
    assert.deepEqual(r.files.map((f) => [f.path, f.checkedAgainst]), [
      ["/A/root.img", "loader entry"],
      ["/A/vmlinuz", "boot medium"],
      ["/loader/entries/machined-a.conf", "boot medium"],
    ]);
    assert.equal(s.mount.table.length, 1, "both ESPs unmounted again");
    // The boot medium was only read.
    assert.deepEqual(s.block.bytes(s.medium.disk).subarray(MiB, 5 * MiB), s.pattern);
  } finally {
    await Deno.remove(s.tmp, { recursive: true });
  }
});

Deno.test("install: a copied file that differs, or a root image its entry does not pin, stops it", async () => {
  const s = await setup();
  try {
    const deps = { block: s.block, mount: s.mount, workDir: s.work };
    await Deno.writeTextFile(join(s.work, "target-esp/A/vmlinuz"), "kernel, changed");
    await assert.rejects(
      installSystem(deps, s.medium, s.target, s.d),
      (e) => e instanceof InstallVerifyError && e.path === "/A/vmlinuz",
    );
    await Deno.writeTextFile(join(s.work, "target-esp/A/vmlinuz"), "kernel");
    for (const side of ["boot-esp", "target-esp"]) {
      await Deno.writeTextFile(join(s.work, side, "A/root.img"), "another root image");
    }
    await assert.rejects(
      installSystem(deps, s.medium, s.target, s.d),
      (e) => e instanceof InstallVerifyError && e.path === "/A/root.img",
    );
    assert.equal(s.mount.table.length, 1, "unmounted after a failure too");
  } finally {
    await Deno.remove(s.tmp, { recursive: true });
  }
});

Deno.test("boot medium: the whole disk behind the root's loop device; unknown otherwise", async () => {
  const sys = (files: Record<string, string>) => (p: string) =>
    p in files ? Promise.resolve(files[p]) : Promise.reject(new Deno.errors.NotFound(p));
  const root = (source: string) => [{ mountPoint: "/", source }];
  const backing = "/sys/block/loop0/loop/backing_file";
  assert.equal(await bootDiskOf(root("/dev/loop0"), sys({ [backing]: "/dev/vdb\n" })), "/dev/vdb");
  // A file-backed loop (a fragmented root.img), no loop (dev mode), no sysfs entry.
  assert.equal(
    await bootDiskOf(root("/dev/loop0"), sys({ [backing]: "/esp/A/root.img" })),
    undefined,
  );
  assert.equal(await bootDiskOf(root("/dev/vda2"), sys({})), undefined);
  assert.equal(await bootDiskOf(root("/dev/loop0"), sys({})), undefined);
});

Deno.test("boot medium: through the dm-verity device over the root's loop device", async () => {
  const sys = (p: string) =>
    p === "/sys/block/loop3/loop/backing_file"
      ? Promise.resolve("/dev/vda\n")
      : Promise.reject(new Deno.errors.NotFound(p));
  const slaves = (names: string[]) => (p: string) =>
    p === "/sys/block/dm-0/slaves" ? Promise.resolve(names) : Promise.reject(new Error(p));
  const root = [{ mountPoint: "/", source: "/dev/dm-0" }];
  assert.equal(await bootDiskOf(root, sys, slaves(["loop3"])), "/dev/vda");
  // Not over one loop device: unknown.
  assert.equal(await bootDiskOf(root, sys, slaves(["vda2"])), undefined);
  assert.equal(await bootDiskOf(root, sys, slaves(["loop3", "loop4"])), undefined);
  assert.equal(
    await bootDiskOf([{ mountPoint: "/", source: "/dev/dm-1" }], sys, slaves([])),
    undefined,
  );
});
