/**
 * The real ESP backend against the kernel's vfat, in a private mount
 * namespace (re-run under `unshare --mount`): a FAT32 file system on a loop
 * device, filled as the imager fills it; an install through
 * NativeEspBackend mounts it read-only to read and `rw,dirsync` only while
 * writing, unmounts it after each session, lands slot B, and leaves a file
 * system `fsck.fat -n` finds clean. Needs root, mkfs.vfat, mtools, losetup.
 */
import assert from "node:assert/strict";
import { assertNotHostNamespace, insideTestNamespace, rerunInNamespace } from "../testing.ts";
import { NativeMountBackend } from "../mount/mod.ts";
import { NativeEspBackend } from "./backend_native.ts";
import { installBundle, readListing } from "../../upgrade/mod.ts";
import { hostCompatible } from "../../bundle/mod.ts";
import { chunked, imagedEsp, testBundle, testKeys } from "../../upgrade/testing.ts";

const isRoot = Deno.uid() === 0;
/** The host kernel must have vfat (built in or loaded): a container's may not. */
const hasVfat = /\tvfat$/m.test(await Deno.readTextFile("/proc/filesystems").catch(() => ""));

async function sh(cmd: string, ...args: string[]): Promise<string> {
  const o = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr);
  if (!o.success) throw new Error(`${cmd} ${args.join(" ")}: ${text}`);
  return text;
}

/** The mount options of `target` in this namespace, or undefined when not mounted. */
async function mountOptions(target: string): Promise<string | undefined> {
  const line = (await Deno.readTextFile("/proc/self/mountinfo")).split("\n")
    .find((l) => l.split(" ")[4] === target);
  return line?.split(" ")[5];
}

if (!insideTestNamespace("mount")) {
  Deno.test({
    name:
      "NativeEspBackend on a real vfat in a private mount namespace (needs root and vfat in the kernel)",
    ignore: !isRoot || !hasVfat,
    fn: async () => {
      const r = await rerunInNamespace(
        "mount",
        ["--mount", "--propagation", "private"],
        import.meta.url,
      );
      assert.equal(r.code, 0, r.output);
      assert.match(r.output, /\| 1 passed \| 0 failed \(/, "ran: not failed or ignored");
    },
  });
} else {
  assertNotHostNamespace("mnt");
  Deno.test("install through NativeEspBackend: rw only while writing, slot B lands, fsck clean", async () => {
    const dir = await Deno.makeTempDir({ prefix: "machined-esp-" });
    const image = `${dir}/esp.img`;
    let loop = "";
    try {
      const f = await Deno.open(image, { write: true, create: true });
      await f.truncate(64 << 20);
      f.close();
      await sh("mkfs.vfat", "-F", "32", "-n", "EFI", image);
      const env = { MTOOLS_SKIP_CHECK: "1" };
      for (const d of ["/A", "/B", "/loader", "/loader/entries"]) {
        await new Deno.Command("mmd", { args: ["-i", image, `::${d}`], env }).output();
      }
      for (const [p, b] of imagedEsp().files) {
        const tmp = `${dir}/stage`;
        await Deno.writeFile(tmp, b);
        const o = await new Deno.Command("mcopy", { args: ["-i", image, tmp, `::${p}`], env })
          .output();
        assert.ok(o.success, `mcopy ${p}`);
      }
      loop = (await sh("losetup", "-f", "--show", image)).trim();
      const target = `${dir}/mnt`;
      const esp = new NativeEspBackend(new NativeMountBackend(), () => loop, target);
      const seen: string[] = [];
      const spy = {
        read: <T>(fn: (fs: never) => Promise<T>) =>
          esp.read(async (
            fs,
          ) => (seen.push(`read ${await mountOptions(target)}`), fn(fs as never))),
        write: <T>(fn: (fs: never) => Promise<T>) =>
          esp.write(async (
            fs,
          ) => (seen.push(`write ${await mountOptions(target)}`), fn(fs as never))),
      };
      const k = await testKeys();
      const b = await testBundle({ key: k.signing });
      await installBundle(chunked(b.bytes, 4096), {
        esp: spy,
        booted: "A",
        keys: [k.trusted],
        machine: hostCompatible(),
      });
      assert.deepEqual(seen.map((s) => s.split(" ")[0]), ["read", "write", "read", "write"]);
      for (const s of seen) {
        assert.match(s, s.startsWith("read") ? /^read ro[,\s]/ : /^write rw[,\s]/, s);
      }
      assert.equal(await mountOptions(target), undefined, "unmounted after the sessions");
      const listing = await esp.read(readListing);
      assert.deepEqual(listing.entries.map((e) => e.file).sort(), [
        "machined-a.conf",
        "machined-b+3.conf",
      ]);
      assert.deepEqual(listing.slotFiles.B, ["initramfs.img", "root.img", "vmlinuz"]);
      await sh("losetup", "-d", loop);
      loop = "";
      await sh("fsck.fat", "-n", image);
    } finally {
      if (loop) await sh("losetup", "-d", loop).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  });
}
