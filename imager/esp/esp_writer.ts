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
  type Slot,
  slotCmdline,
  slotPaths,
  type SlotRoot,
} from "../../layout/mod.ts";

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
  for (const d of ["/EFI", "/EFI/BOOT", "/loader", "/loader/entries", "/A", "/B"]) await mmd(d);
  const loader = typeof spec.bootloader === "string"
    ? { file: spec.bootloader, name: "BOOTX64.EFI" }
    : spec.bootloader;
  await mcopy(loader.file, `/EFI/BOOT/${loader.name}`);
  const conf = `${spec.workDir}/loader.conf`;
  await Deno.writeTextFile(conf, loaderConf());
  await mcopy(conf, "/loader/loader.conf");
  for (const slot of ["A", "B"] as const) {
    const p = slotPaths(slot);
    await mcopy(spec.slots[slot].kernel, p.kernel);
    await mcopy(spec.slots[slot].initramfs, p.initramfs);
    const root = spec.slots[slot].root;
    if (root) await mcopy(root.file, p.rootImage);
    const entry = `${spec.workDir}/machined-${slot.toLowerCase()}.conf`;
    // The default slot's generation is 1, the other's 0: both good, the default first.
    const generation = slot === spec.defaultSlot ? 1 : 0;
    await Deno.writeTextFile(
      entry,
      loaderEntry(slot, slotCmdline(spec.cmdline, slot, root), { generation }),
    );
    await mcopy(entry, p.entry);
  }
}

/** List the ESP's files recursively (for checks and `deno task image` output). */
export async function listEsp(image: string, offset: bigint): Promise<string> {
  return await run("mdir", ["-/", "-b", "-i", `${image}@@${offset}`, "::/"], {
    env: { MTOOLS_SKIP_CHECK: "1" },
  });
}
