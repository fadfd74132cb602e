/**
 * The QEMU tier for the ESP's power-cut safety (platform/esp/dir_files.ts):
 * a small VM (the pinned Debian kernel, an initramfs of busybox and the
 * Deno running this test) mounts three vfat disks as machined mounts the
 * ESP and runs platform/esp/power_cut_guest.ts, which leaves each of the
 * first two as a cut halfway through writing a 48 MiB file would, with the
 * FAT's buffers written and the file's directory entry not (the order the
 * kernel's flusher may take). The VM is killed there and `fsck.fat -n`
 * reads each disk on the host (e2e/fat_check.ts):
 *   - the control, written by plain writes, has lost clusters (this is the
 *     hazard, and the proof that the cut is where it can bite);
 *   - the file written by DirEspFiles.writeFile (grown to its size first)
 *     leaves nothing but the dirty bit.
 * The guest's timings of both ways of writing the whole file go to
 * bench/results/esp_write.json. Needs QEMU, mkfs.vfat and fsck.fat.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildTinyGuest, BUSYBOX, tinyGuestArgs, waitForConsole } from "./tiny_guest.ts";
import { checkFat } from "./fat_check.ts";
import { removeScratch } from "./helpers.ts";

const has = (cmd: string) =>
  new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null" }).outputSync()
    .success;
const hasFile = (path: string) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
};
const tools = ["qemu-system-x86_64", "mkfs.vfat", "fsck.fat"].every(has) && hasFile(BUSYBOX);
const MODULES = ["virtio_pci", "virtio_blk", "vfat", "nls_cp437", "nls_utf8"];
const APPLETS = ["sh", "mount", "insmod", "mkdir", "sleep"];
const DISKS = ["a", "b", "c"] as const;

Deno.test({
  name: "ESP writes: a cut with the FAT flushed halfway leaves lost clusters from plain writes, " +
    "none from DirEspFiles.writeFile (needs qemu-system-x86_64, mkfs.vfat, fsck.fat, /bin/busybox)",
  ignore: !tools,
  fn: async () => {
    const work = await Deno.makeTempDir({ prefix: "machined-espcut-" });
    try {
      const { kernel, initrd } = await buildGuest(work);
      for (const d of DISKS) await makeVfat(join(work, `${d}.img`));
      const consoleLog = join(work, "console.log");
      const qemu = startGuest(work, kernel, initrd, consoleLog);
      let exited = false;
      qemu.status.then(() => (exited = true));
      let text = "";
      try {
        text = (await waitForConsole(consoleLog, /CUT b[\s\S]*CUT a/, {
          ms: 600_000,
          who: "the write-cut guest",
          exited: () => exited,
          failed: /GUEST EXITED/,
        })).text;
      } finally {
        try {
          qemu.kill("SIGKILL");
        } catch { /* already ended */ }
        await qemu.status;
      }
      const control = await checkFat(join(work, "a.img"));
      const preallocated = await checkFat(join(work, "b.img"));
      const timing = /ESPWRITE (\{.*\})/.exec(text);
      assert.ok(timing, "the guest timed both writes");
      const figures = {
        suite: "esp-write",
        accel: "tcg",
        ...JSON.parse(timing[1]),
        controlDamage: control.damage,
      };
      console.log(JSON.stringify(figures));
      await Deno.mkdir("bench/results", { recursive: true });
      await Deno.writeTextFile("bench/results/esp_write.json", JSON.stringify(figures, null, 2));

      assert.ok(
        control.damage.some((l) => /^Reclaimed \d+ unused clusters/.test(l)),
        `plain writes cut so leave lost clusters (the hazard): ${control.damage.join(" | ")}`,
      );
      assert.deepEqual(preallocated.damage, [], "DirEspFiles.writeFile cut so");
      assert.ok(preallocated.dirty, "cut while mounted read-write");
    } finally {
      await removeScratch(work);
    }
  },
});

async function makeVfat(path: string): Promise<void> {
  const f = await Deno.open(path, { write: true, create: true, truncate: true });
  await f.truncate(128 << 20);
  f.close();
  const o = await new Deno.Command("mkfs.vfat", { args: ["-F", "32", "-n", "EFI", path] })
    .output();
  assert.ok(o.success, new TextDecoder().decode(o.stderr));
}

/** The guest's /init: modules, the three disks mounted as the ESP is, then the guest program. */
function guestInit(modules: string[]): string {
  return `#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
${modules.map((m) => `insmod /lib/modules/${m}`).join("\n")}
for d in ${DISKS.join(" ")}; do
  mkdir -p /$d
  mount -t vfat -o dirsync,nosuid,nodev,noexec,codepage=437,iocharset=utf8 /dev/vd$d /$d
done
HOME=/tmp DENO_DIR=/tmp/deno NO_COLOR=1 ${Deno.execPath()} run -A --no-config /guest.js
echo "GUEST EXITED $?"
while :; do sleep 3600; done
`;
}

/** Kernel and initramfs (busybox, this Deno and its libraries, the bundled guest program). */
async function buildGuest(dir: string): Promise<{ kernel: string; initrd: string }> {
  const guestJs = join(dir, "guest.js");
  const bundled = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "-o",
      guestJs,
      new URL("../platform/esp/power_cut_guest.ts", import.meta.url).pathname,
    ],
  }).output();
  assert.ok(bundled.success, new TextDecoder().decode(bundled.stderr));
  return buildTinyGuest(dir, {
    name: "guest.cpio",
    modules: MODULES,
    binaries: [Deno.execPath()],
    applets: APPLETS,
    init: guestInit,
    extra: [{ type: "file", path: "/guest.js", source: guestJs }],
  });
}

function startGuest(work: string, kernel: string, initrd: string, consoleLog: string) {
  const devices = DISKS.flatMap((d) => [
    "-drive",
    `file=${join(work, `${d}.img`)},format=raw,if=virtio,cache=writeback`,
  ]);
  return new Deno.Command("qemu-system-x86_64", {
    args: tinyGuestArgs({ kernel, initrd, consoleLog, memoryMiB: 1024, devices }),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}
