import assert from "node:assert/strict";
import { Rootfs } from "./initramfs/rootfs.ts";
import { mksquashfsArgs, pseudoFile, writeRootImage } from "./root_image.ts";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
const haveSquashfs = exists("/usr/bin/mksquashfs") && exists("/usr/bin/unsquashfs");
const haveErofs = exists("/usr/bin/mkfs.erofs");

function tree(): Rootfs {
  const fs = new Rootfs();
  fs.dir("/");
  fs.dir("/usr/lib/machined/seed/run/deno/apid");
  fs.chown("/usr/lib/machined/seed/run/deno/apid", { uid: 50000, gid: 50000 });
  fs.file("/etc/machined/config.yaml", "version: v1\n", 0o600);
  fs.symlink("/etc/resolv.conf", "/run/resolv.conf");
  fs.charDev("/dev/console", 5, 1);
  return fs;
}

Deno.test("the pseudo file gives every file and directory its planned mode and owner", () => {
  const text = pseudoFile(tree().entries().sort((a, b) => (a.path < b.path ? -1 : 1)));
  assert.match(text, /^\/etc\/machined\/config\.yaml m 600 0 0$/m);
  assert.match(text, /^\/usr\/lib\/machined\/seed\/run\/deno\/apid m 755 50000 50000$/m);
  assert.doesNotMatch(text, /resolv|console/);
});

Deno.test({
  name: "a squashfs root image keeps planned owners and modes, drops device nodes, " +
    "and its sha256 is the file's (needs squashfs-tools)",
  ignore: !haveSquashfs,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "root-image-" });
  try {
    const r = await writeRootImage(tree(), `${dir}/root.img`, {
      mtime: 1_700_000_000,
      workDir: `${dir}/work`,
    });
    const listing = new TextDecoder().decode(
      (await new Deno.Command("unsquashfs", { args: ["-lln", r.path], stdout: "piped" }).output())
        .stdout,
    );
    assert.match(
      listing,
      /^drwxr-xr-x 50000\/50000 .* squashfs-root\/usr\/lib\/machined\/seed\/run\/deno\/apid$/m,
    );
    assert.match(
      listing,
      /^-rw------- 0\/0 .* 2023-11-14 22:13 squashfs-root\/etc\/machined\/config\.yaml$/m,
    );
    assert.match(listing, /squashfs-root\/etc\/resolv\.conf -> \/run\/resolv\.conf/);
    assert.doesNotMatch(listing, /console/);
    const d = await crypto.subtle.digest("SHA-256", await Deno.readFile(r.path));
    assert.equal(
      r.sha256,
      Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join(""),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "an EROFS root image builds from the same tree (needs erofs-utils)",
  ignore: !haveErofs,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "root-image-erofs-" });
  try {
    const r = await writeRootImage(tree(), `${dir}/root.img`, {
      fstype: "erofs",
      mtime: 1_700_000_000,
      workDir: `${dir}/work`,
    });
    const magic = new DataView((await Deno.readFile(r.path)).buffer).getUint32(1024, true);
    assert.equal(magic, 0xe0f5e1e2, "EROFS superblock magic at 1024");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the root image is lz4 (high compression), pinned times, no xattrs: the boot-time choice", () => {
  const args = mksquashfsArgs("/stage", "/out.img", "/pseudo", 1_700_000_000).join(" ");
  assert.match(args, /-comp lz4 -Xhc\b/);
  assert.match(args, /-all-time 1700000000 -mkfs-time 1700000000/);
  assert.match(args, /-no-xattrs/);
});
