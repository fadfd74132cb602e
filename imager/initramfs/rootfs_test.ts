import assert from "node:assert/strict";
import { parseLdd, Rootfs, RootfsConflictError } from "./rootfs.ts";

Deno.test("parseLdd keeps real paths and the loader, drops the vDSO", () => {
  const out = [
    "\tlinux-vdso.so.1 (0x00007ffd)",
    "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f48)",
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f48)",
  ].join("\n");
  assert.deepEqual(parseLdd(out), [
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib64/ld-linux-x86-64.so.2",
  ]);
});

Deno.test("parents appear on their own and paths below a symlink land at its target", () => {
  const fs = new Rootfs();
  fs.symlink("/lib", "usr/lib");
  fs.file("/lib/modules/x.ko", "ko");
  const paths = fs.entries().map((e) => e.path).sort();
  assert.deepEqual(paths, [
    "/",
    "/lib",
    "/usr",
    "/usr/lib",
    "/usr/lib/modules",
    "/usr/lib/modules/x.ko",
  ]);
  assert.equal(fs.get("/lib/modules/x.ko")?.type, "file");
});

Deno.test("a file where a directory is is a typed conflict", () => {
  const fs = new Rootfs();
  fs.dir("/etc");
  assert.throws(() => fs.file("/etc", "x"), RootfsConflictError);
});

Deno.test("mirror recreates host symlinks on the way to a file", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.mkdir(`${dir}/real/sub`, { recursive: true });
    await Deno.writeTextFile(`${dir}/real/sub/lib.so`, "x");
    await Deno.symlink("real", `${dir}/alias`);
    await Deno.symlink("lib.so", `${dir}/real/sub/lib.so.1`);
    const fs = new Rootfs();
    await fs.mirror(`${dir}/alias/sub/lib.so.1`);
    const alias = fs.get(`${dir}/alias`);
    assert.deepEqual(alias, { type: "symlink", path: `${dir}/alias`, target: "real" });
    assert.equal(fs.get(`${dir}/real/sub/lib.so.1`)?.type, "symlink");
    const file = fs.get(`${dir}/real/sub/lib.so`);
    assert.equal(file?.type, "file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
