/**
 * fat_check.ts's reading of fsck.fat, on real filesystems made here (needs
 * mkfs.vfat, fsck.fat and mtools): clean, dirty bit and a stale FSInfo free
 * count (as a power cut while mounted leaves them), and damaged (a FAT entry
 * overwritten).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fatFindings } from "./fat_check.ts";

const has = (cmd: string) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`] }).outputSync().success;
const tools = ["mkfs.vfat", "fsck.fat", "mcopy"].every(has);

async function sh(cmd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, env: { MTOOLS_SKIP_CHECK: "1" } }).output();
  return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
}

async function poke(file: string, offset: number, bytes: number[]) {
  using f = await Deno.open(file, { write: true });
  await f.seek(offset, Deno.SeekMode.Start);
  await f.write(new Uint8Array(bytes));
}

Deno.test({
  name:
    "fatFindings: clean, the dirty bit alone, and damage, from fsck.fat -n itself (needs dosfstools, mtools)",
  ignore: !tools,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "fat-check-" });
  try {
    const image = join(dir, "esp.img");
    await sh("truncate", "-s", "64M", image);
    await sh("mkfs.vfat", "-F", "32", image);
    await Deno.writeTextFile(join(dir, "entry.conf"), "title machined\n");
    await sh("mcopy", "-i", image, join(dir, "entry.conf"), "::/entry.conf");
    const clean = { dirty: false, staleFreeCount: false, damage: [] };
    assert.deepEqual(fatFindings(await sh("fsck.fat", "-n", image)), clean);
    // FAT32's dirty flag: byte 0x41 of the boot sector, as Linux sets it on a read-write mount.
    await poke(image, 0x41, [0x01]);
    assert.deepEqual(fatFindings(await sh("fsck.fat", "-n", image)), { ...clean, dirty: true });
    // FSInfo (sector 1) holds the free cluster count at byte 488: make it stale.
    await poke(image, 512 + 488, [0x10, 0, 0, 0]);
    assert.deepEqual(fatFindings(await sh("fsck.fat", "-n", image)), {
      ...clean,
      dirty: true,
      staleFreeCount: true,
    });
    // Overwrite the first FAT's entries 3 and 4 (32 reserved sectors): its copies differ.
    await poke(image, 32 * 512 + 12, [0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0x0f]);
    const damaged = fatFindings(await sh("fsck.fat", "-n", image));
    assert.equal(damaged.dirty, true);
    assert.ok(damaged.damage.some((l) => /FATs differ/.test(l)), damaged.damage.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
