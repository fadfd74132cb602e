/**
 * `deno task image --arch arm64` on this x86_64 host: the image is
 * reproducible, boots through systemd-boot's aa64 loader, and every binary it
 * ships (Deno, the addon, machined-init, containerd, runc, mkfs.ext4 and
 * their libraries) is aarch64. Root: native-ops/cross builds in a chroot.
 */
import assert from "node:assert/strict";
import { buildImage } from "../build_image.ts";
import { listEsp } from "../esp/esp_writer.ts";
import { readElf } from "../../native-ops/cross/mod.ts";
import { PROFILES } from "./profiles.ts";
import { run } from "../run.ts";

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);
const canCross = Deno.uid() === 0 &&
  (await exists("/usr/sbin/debootstrap") || await exists(".cache/cross/bookworm/usr/bin/rustc"));

async function sha256(path: string): Promise<string> {
  const out = await run("sha256sum", [path]);
  return out.split(" ")[0];
}

Deno.test({
  name: "an arm64 image (no code cache) builds twice to the same bytes, with BOOTAA64.EFI, " +
    "ttyAMA0 and only aarch64 binaries (needs root, debootstrap, squashfs-tools, mtools)",
  ignore: !canCross,
  sanitizeResources: false,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "imager-arm64-" });
  try {
    // Without the code cache: warming it runs the arm64 Deno under qemu-aarch64
    // for about 3 minutes per build (docs/imager.md); the rest is the same image.
    const opts = { arch: "arm64" as const, quietConsole: true, force: true, codeCache: false };
    const one = await buildImage({ ...opts, out: `${dir}/one.img` });
    const two = await buildImage({ ...opts, out: `${dir}/two.img` });
    assert.equal(await sha256(one.out), await sha256(two.out));
    assert.match(one.cmdline, /^console=ttyAMA0,115200 /);
    const listing = await listEsp(one.out, one.layout!.espOffset);
    assert.match(listing, /BOOTAA64\.EFI/i);
    assert.doesNotMatch(listing, /BOOTX64\.EFI/i);

    const stage = `${dir}/root`;
    await run("unsquashfs", ["-q", "-d", stage, one.rootImagePath]);
    const elfs = [
      "usr/bin/deno",
      "machined/machined_native_ops.node",
      "usr/bin/containerd",
      "usr/bin/containerd-shim-runc-v2",
      "usr/bin/runc",
      "usr/sbin/mkfs.ext4",
      "usr/lib/ld-linux-aarch64.so.1",
      "usr/lib/aarch64-linux-gnu/libc.so.6",
    ];
    for (const f of elfs) {
      const real = await Deno.realPath(`${stage}/${f}`).catch(() => `${stage}/${f}`);
      assert.equal((await readElf(real)).machine, PROFILES.arm64.elfMachine, f);
    }
    const release = await Deno.readTextFile(`${stage}/etc/machined/release`);
    assert.match(release, /^arch=arm64$/m);
    assert.match(release, /^deno=deno 2\.9\.3 \(@deno\/linux-arm64-glibc, npm\)$/m);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
