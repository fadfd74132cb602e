import assert from "node:assert/strict";
import { planInitramfs, writeInitramfs } from "./initramfs/initramfs.ts";
import { writeDiskImage } from "./disk_image.ts";
import { readImageGpt } from "./image_gpt.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "../controllers/block/layout.ts";
import { listEsp } from "./esp/esp_writer.ts";
import { readCpio } from "./cpio.ts";

const TOOLS = ["zstd", "mkfs.vfat", "mcopy", "mmd", "ldd"];
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
async function build(dir: string, inputs: string): Promise<{ image: string; initramfs: string }> {
  const fs = await planInitramfs({
    program: { kind: "js", file: `${inputs}/main.js` },
    deno: "/usr/bin/true",
    init: "/usr/bin/true",
    modules: {
      modulesDir: `${inputs}/modules`,
      release: "0.0-test",
      load: [{ name: "a", path: "kernel/a.ko", deps: [] }],
    },
    config: `${inputs}/config.yaml`,
    release: { kernel: "test" },
  });
  const initramfs = `${dir}/initramfs.zst`;
  await writeInitramfs(fs, initramfs, { zstdLevel: 3, mtime: 1_700_000_000 });
  const image = `${dir}/disk.img`;
  await writeDiskImage({
    out: image,
    size: 96n << 20n,
    espSize: 64n << 20n,
    diskGuid: "11111111-2222-4333-8444-555555555555",
    espGuid: "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE",
    bootloader: `${inputs}/boot.efi`,
    slots: {
      A: { kernel: `${inputs}/vmlinuz`, initramfs },
      B: { kernel: `${inputs}/vmlinuz`, initramfs },
    },
    defaultSlot: "A",
    cmdline: "console=ttyS0",
    sourceDateEpoch: 1_700_000_000,
    workDir: `${dir}/work`,
  });
  return { image, initramfs };
}

Deno.test({
  name:
    "the same inputs give byte-identical initramfs and disk image (needs zstd, dosfstools, mtools)",
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
        "loader/entries/a.conf",
        "B/initramfs.img",
      ]
    ) {
      assert.match(listing, new RegExp(f.replaceAll("/", "\\/"), "i"));
    }
    const unzstd = await new Deno.Command("zstd", { args: ["-dc", one.initramfs], stdout: "piped" })
      .output();
    const cpio = readCpio(unzstd.stdout);
    const paths = cpio.map((m) => m.path);
    for (
      const p of [
        "dev/console",
        "etc/passwd",
        "etc/machined/modules",
        "etc/machined/config.yaml",
        "machined/main.js",
        "usr/bin/deno",
        "system/state",
        "tmp",
      ]
    ) {
      assert.ok(paths.includes(p), `initramfs lacks ${p}`);
    }
    const modules = new TextDecoder().decode(
      cpio.find((m) => m.path === "etc/machined/modules")!.data,
    );
    assert.match(modules, /^\/usr\/lib\/modules\/0\.0-test\/kernel\/a\.ko$/m);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
