/**
 * Formats the EFI System Partition as FAT32 directly inside the disk image
 * (`mkfs.vfat --offset`) and fills it with mtools (`mcopy -i image@@offset`):
 * no root, no loop device, no mount. `--invariant` and SOURCE_DATE_EPOCH pin
 * the volume id and every timestamp, so the partition is reproducible.
 */
import { run } from "../run.ts";
import {
  loaderConf,
  loaderEntry,
  SECURE_BOOT_KEYS_DIR,
  type Slot,
  slotCmdline,
  slotPaths,
  type SlotRoot,
  ukiLoaderEntry,
} from "../../layout/mod.ts";
import {
  enrollmentFiles,
  type SecureBootSpec,
  signedLoader,
  signedUki,
} from "../secure_boot/secure_esp.ts";

/**
 * One slot's boot files on the host. A slot is a directory of files on the
 * ESP (vmlinuz, initramfs.img, root.img) plus its loader entry, so an upgrade
 * can write one slot while the other runs.
 */
export interface SlotFiles {
  kernel: string;
  initramfs: string;
  /** The read-only root image and what its entry must say about it. */
  root?: { file: string } & SlotRoot;
}

/** What {@link writeEsp} puts where. */
export interface EspSpec {
  /** The disk image file (already of its final size). */
  image: string;
  /** Byte offset of the partition (a multiple of 512). */
  offset: bigint;
  /** Partition size in bytes. */
  size: bigint;
  /**
   * systemd-boot's EFI binary, installed as EFI/BOOT/<name> (BOOTX64.EFI,
   * BOOTAA64.EFI: the removable-media path the firmware starts). A plain path
   * is installed as BOOTX64.EFI.
   */
  bootloader: string | { file: string; name: string };
  slots: Record<Slot, SlotFiles>;
  defaultSlot: Slot;
  /** Kernel command line of both entries. */
  cmdline: string;
  /** Seconds since the epoch stamped on every file. */
  sourceDateEpoch: number;
  /** Directory for the small generated config files. */
  workDir: string;
  /**
   * Sign the loader and boot each slot from a signed UKI, with the owner's
   * keys ready to enroll (secure_boot/secure_esp.ts). @default a plain ESP
   */
  secureBoot?: SecureBootSpec;
}

/**
 * Create the FAT32 file system and copy the boot loader, both slots and the
 * loader configuration into it.
 * @throws CommandError when mkfs.vfat or an mtools command fails.
 */
export async function writeEsp(spec: EspSpec): Promise<void> {
  const env = { SOURCE_DATE_EPOCH: String(spec.sourceDateEpoch), MTOOLS_SKIP_CHECK: "1" };
  const sector = spec.offset / 512n;
  const blocks = spec.size / 1024n;
  await run("mkfs.vfat", [
    "-F",
    "32",
    "-n",
    "EFI",
    "--invariant",
    `--offset=${sector}`,
    spec.image,
    String(blocks),
  ], { env });
  const drive = `${spec.image}@@${spec.offset}`;
  const mmd = (dir: string) => run("mmd", ["-i", drive, `::${dir}`], { env });
  const mcopy = (from: string, to: string) => run("mcopy", ["-i", drive, from, `::${to}`], { env });

  await Deno.mkdir(spec.workDir, { recursive: true });
  const sb = spec.secureBoot;
  const dirs = ["/EFI", "/EFI/BOOT", "/loader", "/loader/entries", "/A", "/B"];
  if (sb) dirs.push("/loader/keys", SECURE_BOOT_KEYS_DIR);
  for (const d of dirs) await mmd(d);
  const loader = typeof spec.bootloader === "string"
    ? { file: spec.bootloader, name: "BOOTX64.EFI" }
    : spec.bootloader;
  const loaderFile = sb ? await signedLoader(sb, loader.file, spec.workDir) : loader.file;
  await mcopy(loaderFile, `/EFI/BOOT/${loader.name}`);
  const conf = `${spec.workDir}/loader.conf`;
  await Deno.writeTextFile(conf, loaderConf({ secureBootEnroll: sb !== undefined }));
  await mcopy(conf, "/loader/loader.conf");
  if (sb) {
    for (const auth of await enrollmentFiles(sb, spec.workDir, spec.sourceDateEpoch)) {
      await mcopy(auth, `${SECURE_BOOT_KEYS_DIR}/${auth.slice(auth.lastIndexOf("/") + 1)}`);
    }
  }
  for (const slot of ["A", "B"] as const) {
    await writeSlot(spec, slot, mcopy);
  }
}

/** One slot's files and entry: loose kernel and initramfs, or a signed UKI. */
async function writeSlot(
  spec: EspSpec,
  slot: Slot,
  mcopy: (from: string, to: string) => Promise<string>,
): Promise<void> {
  const p = slotPaths(slot);
  const files = spec.slots[slot];
  const root = files.root;
  if (root) await mcopy(root.file, p.rootImage);
  const cmdline = slotCmdline(spec.cmdline, slot, root);
  // The default slot's generation is 1, the other's 0: both good, the default first.
  const generation = slot === spec.defaultSlot ? 1 : 0;
  let entryText: string;
  if (spec.secureBoot) {
    const uki = await signedUki(spec.secureBoot, {
      kernel: files.kernel,
      initramfs: files.initramfs,
      cmdline,
      name: `machined-${slot.toLowerCase()}`,
      workDir: spec.workDir,
    });
    await mcopy(uki, p.uki);
    entryText = ukiLoaderEntry(slot, { generation });
  } else {
    await mcopy(files.kernel, p.kernel);
    await mcopy(files.initramfs, p.initramfs);
    entryText = loaderEntry(slot, cmdline, { generation });
  }
  const entry = `${spec.workDir}/machined-${slot.toLowerCase()}.conf`;
  await Deno.writeTextFile(entry, entryText);
  await mcopy(entry, p.entry);
}

/** List the ESP's files recursively (for checks and `deno task image` output). */
export async function listEsp(image: string, offset: bigint): Promise<string> {
  return await run("mdir", ["-/", "-b", "-i", `${image}@@${offset}`, "::/"], {
    env: { MTOOLS_SKIP_CHECK: "1" },
  });
}
