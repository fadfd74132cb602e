/**
 * `deno task image --bundle OUT --signing-key KEY`: after building the
 * image, pack its slot (kernel, initramfs, root image) into a signed upgrade
 * bundle (bundle/bundle_writer.ts) for `machinectl upgrade -f OUT`.
 * An image built with `--secure-boot-keys` gives a Secure Boot bundle: each
 * slot's signed UKI and the root image (`boot: "uki"`), its command line
 * inside the UKIs' signatures.
 * A Pi 3's bundle (`--board rpi3`) carries the same three files: the slot's
 * device trees stay those the image was built with. The manifest's command
 * line carries the root's `machined.root.verity=` word, so the node writes it
 * into the other slot's entry whatever its own version.
 */
import { writeBundle } from "../bundle/mod.ts";
import { UEFI_BOARD } from "../bundle/mod.ts";
import type { Board } from "./rpi/board.ts";
import { loadSigningKey } from "../bundle/mod.ts";
import type { ImageResult } from "./build_image.ts";
import { formatBytes } from "./progress.ts";
import { type Arch, PROFILES } from "./arch/profiles.ts";
import { cmdlineWithVerity } from "../layout/mod.ts";
import { readRootVerity } from "./root_image.ts";

/**
 * What a bundle of an `arch` image (for `board`, or a UEFI PC) is
 * compatible with. The node compares `arch` with its Deno.build.arch, which
 * spells it as the Rust target's first word (x86_64, aarch64), so an x86_64
 * bundle is refused by an arm64 node; and `board` with its release record's
 * `board=`, so a UEFI arm64 bundle (the cloud kernel, systemd-boot's slots)
 * is refused by a Pi 3 and a Pi's by a UEFI node. Pure.
 */
export function bundleCompatible(arch: Arch, board?: Board): { arch: string; board: string } {
  return { arch: PROFILES[arch].rustTarget.split("-")[0], board: board ?? UEFI_BOARD };
}

/**
 * Write the bundle of `image`'s slot to `out`, signed with the PKCS#8 key in `keyFile`.
 * @throws TypeError when the key is not an Ed25519 private key.
 */
export async function writeImageBundle(
  image: ImageResult,
  out: string,
  keyFile: string,
): Promise<string> {
  const key = await loadSigningKey(await Deno.readTextFile(keyFile), keyFile);
  const common = {
    version: image.imageVersion,
    compatible: bundleCompatible(image.arch, image.board),
    key,
    extensions: image.extensions,
  };
  const r = image.ukiPaths
    ? await writeBundle(out, {
      ...common,
      boot: "uki",
      files: {
        "machined-a.efi": image.ukiPaths.A,
        "machined-b.efi": image.ukiPaths.B,
        "root.img": image.rootImagePath,
      },
      cmdline: "",
    })
    : await writeBundle(out, {
      ...common,
      files: {
        "vmlinuz": image.kernelPath,
        "initramfs.img": image.initramfsPath,
        "root.img": image.rootImagePath,
      },
      cmdline: cmdlineWithVerity(
        image.cmdline,
        image.rootImage?.verity ?? await readRootVerity(image.rootImagePath),
      ),
    });
  const kind = image.ukiPaths ? "Secure Boot bundle (signed UKIs)" : "bundle";
  return `${out}: ${kind} of version ${r.manifest.version}, ${formatBytes(BigInt(r.bytes))}, ` +
    `signed by ${key.kid}`;
}
