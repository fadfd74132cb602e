/**
 * The boot initramfs: machined-init (with the libraries it links), the
 * console and null device nodes the kernel needs before devtmpfs, mount
 * points, and only the kernel modules that reach the root image (virtio
 * block, FAT for the ESP, loop, squashfs and dm-verity or erofs) and softdog, the watchdog it arms. Everything else lives in
 * the slot's read-only root image (root_image.ts), which machined-init
 * verifies, mounts and switches into.
 */
import type { ModuleRef } from "../kernel/module_closure.ts";
import { type LibrarySource, Rootfs } from "./rootfs.ts";
import { LAYOUT } from "./initramfs.ts";

/**
 * The modules machined-init loads to reach the root image, before the
 * root-image tree's own list (/etc/machined/modules) is loaded by machined.
 * The ESP is mounted with codepage=437 and iocharset=utf8.
 */
export const BOOT_MODULES = [
  "virtio_pci",
  "virtio_blk",
  "vfat",
  "nls_cp437",
  "nls_utf8",
  "loop",
  // LoaderDevicePartUUID: with two disks holding an ESP, the one the loader came from.
  "efivarfs",
  // The watchdog machined-init arms before it execs machined (native-ops/init/src/watchdog.rs).
  "softdog",
] as const;

/** The modules of each root file system type (a squashfs root carries a dm-verity tree). */
export const ROOT_FS_MODULES = {
  // dm_verity pulls in dm_mod, dm_bufio and reed_solomon (and dax on arm64) by its dependencies.
  squashfs: ["squashfs", "dm_verity"],
  erofs: ["erofs"],
} as const;

/** Where machined-init reads the modules to load, one path per line, in order. */
export const INITRAMFS_MODULES_LIST = "/etc/machined/initramfs-modules";

/** What {@link planBootInitramfs} needs. */
export interface BootInitramfsSpec {
  /** Host path of machined-init. */
  init: string;
  modules: { modulesDir: string; release: string; load: ModuleRef[] };
  /** Where machined-init's libraries come from (the host's by default). */
  libraries?: LibrarySource;
}

/** Lay out the boot initramfs. */
export async function planBootInitramfs(spec: BootInitramfsSpec): Promise<Rootfs> {
  const fs = new Rootfs();
  fs.dir("/");
  for (const d of ["/proc", "/sys", "/dev", "/esp", "/newroot"]) fs.dir(d);
  fs.charDev("/dev/console", 5, 1, 0o600);
  fs.charDev("/dev/null", 1, 3, 0o666);
  await fs.binary(LAYOUT.init, spec.init, 0o755, spec.libraries);
  const { modulesDir, release, load } = spec.modules;
  const shipped = (m: ModuleRef) => `/usr/lib/modules/${release}/${m.path}`;
  for (const m of load) fs.copy(shipped(m), `${modulesDir}/${m.path}`);
  fs.file(
    INITRAMFS_MODULES_LIST,
    "# Modules machined-init loads to reach the root image, in order.\n" +
      load.map((m) => shipped(m) + "\n").join(""),
  );
  return fs;
}
