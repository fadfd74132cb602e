/**
 * The board's boot inputs from Debian: the raspi-firmware package (GPU
 * firmware, from the non-free-firmware component through the private apt,
 * downloaded and unpacked, never installed) and the device trees the kernel
 * package ships. Cached under the imager's cache directory like the kernel.
 */
import { run } from "../run.ts";
import { PrivateApt } from "../arch/private_apt.ts";
import type { BoardProfile } from "./board.ts";

/** Host paths of the files the boot partition gets from Debian. */
export interface BoardFirmware {
  /** name on the FAT's root → host path (bootcode.bin, start.elf, fixup.dat). */
  firmware: Array<{ name: string; path: string }>;
  /** name in each slot directory → host path (the bcm2837 device trees). */
  dtbs: Array<{ name: string; path: string }>;
}

/**
 * Download and unpack `board.firmware` (once) and find the device trees in
 * the unpacked kernel package at `kernelRoot` (its /usr/lib/linux-image-<release>/broadcom).
 * @throws Deno.errors.NotFound naming a file the packages do not have.
 */
export async function boardFirmware(
  board: BoardProfile,
  cacheDir: string,
  kernelRoot: string,
): Promise<BoardFirmware> {
  const dir = `${cacheDir}/${board.arch}`;
  const pin = board.firmware;
  const root = `${dir}/${pin.package}_${pin.version}`;
  if (!(await exists(`${root}/.complete`))) {
    const apt = new PrivateApt(board.arch, `${dir}/apt`);
    const deb = await apt.download(pin.package, pin.version, `${dir}/debs`);
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await run("dpkg-deb", ["-x", deb, root]);
    await Deno.writeTextFile(`${root}/.complete`, `${pin.package}=${pin.version}\n`);
  }
  const firmware = board.firmwareFiles.map((name) => ({
    name,
    path: `${root}/usr/lib/raspi-firmware/${name}`,
  }));
  const dtbDir = `${kernelRoot}/usr/lib/linux-image-${board.kernel.release}/broadcom`;
  const dtbs = board.dtbs.map((name) => ({ name, path: `${dtbDir}/${name}` }));
  for (const f of [...firmware, ...dtbs]) {
    if (!(await exists(f.path))) {
      throw new Deno.errors.NotFound(`${f.name} is not at ${f.path} (check the pins in board.ts)`);
    }
  }
  return { firmware, dtbs };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
