import assert from "node:assert/strict";
import { planRootTree, writeInitramfs } from "./initramfs/initramfs.ts";
import { planBootInitramfs } from "./initramfs/boot_initramfs.ts";
import { writeRootImage } from "./root_image.ts";
import { writeDiskImage } from "./disk_image.ts";
import { PARTITION_NAME, PARTITION_TYPE, readImageGpt } from "../layout/mod.ts";
import { listEsp } from "./esp/esp_writer.ts";
import { readCpio } from "./cpio.ts";

const TOOLS = ["zstd", "mkfs.vfat", "mcopy", "mmd", "ldd", "mksquashfs", "unsquashfs"];
const haveTools = TOOLS.every((t) =>
  ["/usr/bin/", "/usr/sbin/", "/sbin/"].some((d) => {
    try {
      return Deno.statSync(d + t).isFile;
    } catch {
      return false;
    }
  })
);

async function sha256(path: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Build a small image (stand-in "deno" and kernel, one fake module) into `dir`. */
async function build(
  dir: string,
  inputs: string,
): Promise<{ image: string; initramfs: string; root: string }> {
  const tree = await planRootTree({
    program: { kind: "js", file: `${inputs}/main.js` },
    deno: "/usr/bin/true",
    modules: {
      modulesDir: `${inputs}/modules`,
      release: "0.0-test",
      load: [{ name: "a", path: "kernel/a.ko", deps: [] }],
    },
    config: `${inputs}/config.yaml`,
    release: { kernel: "test" },
  });
  const root = await writeRootImage(tree, `${dir}/root.img`, {
    mtime: 1_700_000_000,
    workDir: `${dir}/stage`,
  });
  const fs = await planBootInitramfs({
    init: "/usr/bin/true",
    modules: { modulesDir: `${inputs}/modules`, release: "0.0-test", load: [] },
  });
  const initramfs = `${dir}/initramfs.zst`;
  await writeInitramfs(fs, initramfs, { zstdLevel: 3, mtime: 1_700_000_000 });
  const slot = {
    kernel: `${inputs}/vmlinuz`,
    initramfs,
    root: { file: root.path, sha256: root.sha256, fstype: root.fstype },
  };
  const image = `${dir}/disk.img`;
  await writeDiskImage({
    out: image,
    size: 96n << 20n,
    espSize: 64n << 20n,
    diskGuid: "11111111-2222-4333-8444-555555555555",
    espGuid: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE",
    bootloader: `${inputs}/boot.efi`,
    slots: { A: slot, B: slot },
    defaultSlot: "A",
    cmdline: "console=ttyS0",
    sourceDateEpoch: 1_700_000_000,
    workDir: `${dir}/work`,
  });
  return { image, initramfs, root: root.path };
}

Deno.test({
  name: "the same inputs give byte-identical root image, initramfs and disk image " +
    "(needs zstd, dosfstools, mtools, squashfs-tools)",
  ignore: !haveTools,
}, async () => {
  const root = await Deno.makeTempDir({ prefix: "imager-repro-" });
  try {
    const inputs = `${root}/in`;
    await Deno.mkdir(`${inputs}/modules/kernel`, { recursive: true });
    await Deno.writeTextFile(`${inputs}/main.js`, "console.log('hi');\n");
    await Deno.writeTextFile(`${inputs}/modules/kernel/a.ko`, "not really a module");
    await Deno.writeTextFile(`${inputs}/config.yaml`, "version: v1\n");
    await Deno.writeTextFile(`${inputs}/boot.efi`, "MZ fake loader");
    await Deno.writeTextFile(`${inputs}/vmlinuz`, "fake kernel");
    await Deno.mkdir(`${root}/one`);
    const one = await build(`${root}/one`, inputs);
    await Deno.utime(`${inputs}/main.js`, new Date(), new Date()); // mtimes must not leak in
    await Deno.mkdir(`${root}/two`);
    const two = await build(`${root}/two`, inputs);
    assert.equal(await sha256(one.root), await sha256(two.root));
    assert.equal(await sha256(one.initramfs), await sha256(two.initramfs));
    assert.equal(await sha256(one.image), await sha256(two.image));

    const gpt = await readImageGpt(one.image);
    assert.equal(gpt.table.partitions[0].type, PARTITION_TYPE.EFI_SYSTEM);
    assert.equal(gpt.table.partitions[0].name, PARTITION_NAME.EFI);
    assert.equal(gpt.table.partitions[0].firstLba, 2048);
    assert.equal(gpt.backup.myLba, (96 << 20) / 512 - 1);
    const listing = await listEsp(one.image, 2048n * 512n);
    for (
      const f of [
        "EFI/BOOT/BOOTX64.EFI",
        "loader/loader.conf",
        "loader/entries/machined-a.conf",
        "B/initramfs.img",
        "B/root.img",
      ]
    ) {
      assert.match(listing, new RegExp(f.replaceAll("/", "\\/"), "i"));
    }
    const unzstd = await new Deno.Command("zstd", { args: ["-dc", one.initramfs], stdout: "piped" })
      .output();
    const initramfsPaths = readCpio(unzstd.stdout).map((m) => m.path);
    for (const p of ["dev/console", "sbin/machined-init", "esp", "newroot"]) {
      assert.ok(initramfsPaths.includes(p), `initramfs lacks ${p}`);
    }
    assert.ok(!initramfsPaths.includes("machined/main.js"), "the program is in the root image");
    const entry = new TextDecoder().decode(
      (await new Deno.Command("mtype", {
        args: ["-i", `${one.image}@@${2048 * 512}`, "::/loader/entries/machined-a.conf"],
        env: { MTOOLS_SKIP_CHECK: "1" },
        stdout: "piped",
      }).output()).stdout,
    );
    assert.match(
      entry,
      new RegExp(`machined\\.slot=A machined\\.root\\.sha256=${await sha256(one.root)}`),
    );
    const listing2 = new TextDecoder().decode(
      (await new Deno.Command("unsquashfs", { args: ["-lln", one.root], stdout: "piped" }).output())
        .stdout,
    );
    for (
      const p of [
        "etc/passwd",
        "etc/machined/modules",
        "etc/machined/config.yaml",
        "machined/main.js",
        "usr/bin/deno",
        "system/state",
        "tmp",
      ]
    ) {
      assert.match(listing2, new RegExp(`squashfs-root/${p}\\b`), `root image lacks ${p}`);
    }
    assert.match(listing2, /^-rw------- 0\/0 .* squashfs-root\/etc\/machined\/config\.yaml$/m);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
