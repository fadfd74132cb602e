import assert from "node:assert/strict";
import { writePiDiskImage } from "./pi_disk.ts";
import { readImageGpt } from "../../layout/mod.ts";
import { decodeMbr, GPT_TYPE, MBR_TYPE_FAT32_LBA, readGpt } from "../../platform/block/mod.ts";
import { run } from "../run.ts";
import { BOARD_PROFILES } from "./board.ts";

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
const hasTools = await exists("/usr/sbin/mkfs.vfat") && await exists("/usr/bin/mcopy");
const SHA = "ab".repeat(32);

async function build(dir: string, out: string) {
  const file = async (name: string, content: string) => {
    await Deno.writeTextFile(`${dir}/${name}`, content);
    return `${dir}/${name}`;
  };
  const board = BOARD_PROFILES.rpi3;
  const firmware = {
    firmware: await Promise.all(
      board.firmwareFiles.map(async (name) => ({ name, path: await file(name, `fw ${name}`) })),
    ),
    dtbs: await Promise.all(
      board.dtbs.map(async (name) => ({ name, path: await file(name, `dtb ${name}`) })),
    ),
  };
  const slot = {
    kernel: await file("vmlinuz", "kernel"),
    initramfs: await file("initramfs.img", "initramfs"),
    root: { file: await file("root.img", "root"), sha256: SHA, fstype: "squashfs" as const },
  };
  return await writePiDiskImage({
    out,
    size: 64n << 20n,
    bootSize: 40n << 20n,
    diskGuid: "12345678-2222-3333-4444-555555555555",
    bootGuid: "aaaaaaaa-2222-3333-4444-555555555555",
    firmware,
    slots: { A: slot, B: slot },
    defaultSlot: "A",
    cmdline: "console=ttyS1,115200 rdinit=/sbin/machined-init -- /usr/bin/deno run main.js",
    sourceDateEpoch: 1700000000,
    workDir: `${dir}/work`,
  });
}

const mtype = (image: string, path: string) =>
  run("mtype", ["-i", `${image}@@${2048 * 512}`, `::${path}`], {
    env: { MTOOLS_SKIP_CHECK: "1" },
  });

Deno.test({
  name: "the Pi 3 image: hybrid MBR (FAT32 first, 0xEE), GPT ESP, firmware, config and both " +
    "slots on the FAT, reproducible (needs dosfstools, mtools)",
  ignore: !hasTools,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/pi.img`;
    const layout = await build(dir, out);
    assert.equal(layout.espOffset, 1n << 20n);
    const head = new Uint8Array(512);
    {
      using f = await Deno.open(out);
      await f.read(head);
    }
    const mbr = decodeMbr(head)!;
    assert.deepEqual(mbr.map((e) => [e.type, e.firstLba, e.sectors]), [
      [MBR_TYPE_FAT32_LBA, 2048, (40 << 20) / 512],
      [0xee, 1, 2047],
    ]);
    // Linux and machined read this GPT (the 0xEE entry at LBA 1 makes it a hybrid).
    const gpt = await (async () => {
      using f = await Deno.open(out);
      const size = (await f.stat()).size;
      return await readGpt(
        async (o, l) => {
          const buf = new Uint8Array(l);
          await f.seek(o, Deno.SeekMode.Start);
          for (let i = 0; i < l;) i += (await f.read(buf.subarray(i)))!;
          return buf;
        },
        size,
        512,
      );
    })();
    assert.equal(gpt?.table.partitions.length, 1);
    assert.equal(gpt?.table.partitions[0].type, GPT_TYPE.EFI_SYSTEM);
    assert.equal(gpt?.primaryValid && gpt.backupValid, true);
    await assert.rejects(() => readImageGpt(out)); // strict check: not a protective MBR any more

    const config = await mtype(out, "/config.txt");
    for (
      const line of [
        "arm_64bit=1",
        "enable_uart=1",
        "upstream_kernel=1",
        "kernel=vmlinuz",
        "initramfs initramfs.img followkernel",
        "include slot.txt",
        "include trial.txt",
      ]
    ) assert.ok(config.split("\n").includes(line), `config.txt lacks ${line}:\n${config}`);
    assert.equal(await mtype(out, "/slot.txt"), "os_prefix=A/\n# fallback B\n");
    assert.equal((await mtype(out, "/trial.txt")).includes("os_prefix"), false);
    assert.equal(await mtype(out, "/bootcode.bin"), "fw bootcode.bin");
    for (const slot of ["A", "B"]) {
      assert.equal(await mtype(out, `/${slot}/vmlinuz`), "kernel");
      assert.equal(await mtype(out, `/${slot}/root.img`), "root");
      assert.equal(await mtype(out, `/${slot}/bcm2837-rpi-3-b.dtb`), "dtb bcm2837-rpi-3-b.dtb");
      const cmdline = await mtype(out, `/${slot}/cmdline.txt`);
      assert.equal(cmdline.split("\n").length, 2, "one line");
      assert.match(
        cmdline,
        new RegExp(`machined\\.slot=${slot} machined\\.root\\.sha256=${SHA} -- `),
      );
    }
    const sum = async (p: string) =>
      Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(p))))
        .map((b) => b.toString(16).padStart(2, "0")).join("");
    const first = await sum(out);
    await build(dir, `${dir}/again.img`);
    assert.equal(await sum(`${dir}/again.img`), first, "same inputs, same bytes");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
