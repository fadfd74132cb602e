/**
 * The Raspberry Pi 3 SD-card image: the same GPT as the UEFI image (one
 * FAT32 partition at 1 MiB, typed as an ESP so machined-init and the
 * provisioner find it as on every other node, the rest free for STATE and
 * EPHEMERAL), plus a hybrid MBR listing that partition as FAT32-LBA (0x0C):
 * the Pi's boot ROM reads only an MBR. The FAT holds the GPU firmware at its
 * root, config.txt with slot.txt/trial.txt (boot_config.ts), and one
 * directory per slot: kernel, initramfs, root image, cmdline.txt and the
 * device trees. Built without root (mkfs.vfat --offset, mtools), reproducibly.
 */
import { run } from "../run.ts";
import { type DiskLayout, planDisk } from "../disk_image.ts";
import { readImageGpt, SECTOR_SIZE, writeGptToImage } from "../../layout/mod.ts";
import { decodeMbr, hybridMbr, MBR_TYPE_FAT32_LBA } from "../../platform/block/mod.ts";
import { type Slot, slotCmdline } from "../../layout/mod.ts";
import type { SlotFiles } from "../esp/esp_writer.ts";
import {
  PI_BOOT_FILES,
  piCmdlineTxt,
  piConfigTxt,
  piSlotPaths,
  piSlotTxt,
  piTrialTxt,
} from "../../layout/mod.ts";
import type { BoardFirmware } from "./firmware.ts";

/** Inputs of {@link writePiDiskImage}. */
export interface PiDiskSpec {
  out: string;
  size: bigint;
  /** The boot FAT's size. */
  bootSize: bigint;
  diskGuid: string;
  bootGuid: string;
  firmware: BoardFirmware;
  slots: Record<Slot, SlotFiles>;
  defaultSlot: Slot;
  /** Kernel command line of both slots (the slot's words are added). */
  cmdline: string;
  sourceDateEpoch: number;
  workDir: string;
}

/**
 * Write the SD-card image at `spec.out`, replacing any previous file, then
 * read the GPT and the hybrid MBR back.
 * @throws RangeError when the partition does not fit; CommandError from the
 *   FAT tools; GptVerifyError when the GPT read back is not the one written.
 */
export async function writePiDiskImage(spec: PiDiskSpec): Promise<DiskLayout> {
  const plan = planDisk({ ...spec, espSize: spec.bootSize, espGuid: spec.bootGuid });
  const { layout } = plan;
  await Deno.remove(spec.out).catch(() => {});
  {
    using f = await Deno.open(spec.out, { write: true, create: true, truncate: true });
    await f.truncate(Number(layout.totalSectors) * SECTOR_SIZE);
  }
  await writeBootFat(spec, layout);
  await writeGptToImage(spec.out, plan.writes);
  await readImageGpt(spec.out);
  const first = Number(layout.espOffset / BigInt(SECTOR_SIZE));
  const signature = parseInt(spec.diskGuid.slice(0, 8), 16);
  const mbr = hybridMbr(
    [{ type: MBR_TYPE_FAT32_LBA, firstLba: first, sectors: Number(spec.bootSize / 512n) }],
    first,
    signature,
  );
  await writeGptToImage(spec.out, [{ offset: 0, data: mbr }]);
  await checkMbr(spec.out, first);
  return layout;
}

async function writeBootFat(spec: PiDiskSpec, layout: DiskLayout): Promise<void> {
  const env = { SOURCE_DATE_EPOCH: String(spec.sourceDateEpoch), MTOOLS_SKIP_CHECK: "1" };
  await run("mkfs.vfat", [
    "-F",
    "32",
    "-n",
    "BOOT",
    "--invariant",
    `--offset=${layout.espOffset / 512n}`,
    spec.out,
    String(spec.bootSize / 1024n),
  ], { env });
  const drive = `${spec.out}@@${layout.espOffset}`;
  const mmd = (dir: string) => run("mmd", ["-i", drive, `::${dir}`], { env });
  const mcopy = (from: string, to: string) => run("mcopy", ["-i", drive, from, `::${to}`], { env });
  const text = async (name: string, content: string, to: string) => {
    const file = `${spec.workDir}/pi-${name}`;
    await Deno.writeTextFile(file, content);
    await mcopy(file, to);
  };
  await Deno.mkdir(spec.workDir, { recursive: true });
  for (const f of spec.firmware.firmware) await mcopy(f.path, `/${f.name}`);
  await text("config.txt", piConfigTxt(), PI_BOOT_FILES.config);
  // Both slots are written complete: the other one is a good fallback from the start.
  const fallback = spec.defaultSlot === "A" ? "B" : "A";
  await text("slot.txt", piSlotTxt(spec.defaultSlot, fallback), PI_BOOT_FILES.slot);
  await text("trial.txt", piTrialTxt(), PI_BOOT_FILES.trial);
  for (const slot of ["A", "B"] as const) {
    const p = piSlotPaths(slot);
    const files = spec.slots[slot];
    await mmd(p.dir);
    await mcopy(files.kernel, p.kernel);
    await mcopy(files.initramfs, p.initramfs);
    if (files.root) await mcopy(files.root.file, p.rootImage);
    for (const d of spec.firmware.dtbs) await mcopy(d.path, `${p.dir}/${d.name}`);
    const line = piCmdlineTxt(slotCmdline(spec.cmdline, slot, files.root));
    await text(`cmdline-${slot}.txt`, line, p.cmdline);
  }
}

/** The MBR read back: the boot FAT first, then GPT's 0xEE entry. */
async function checkMbr(image: string, first: number): Promise<void> {
  using f = await Deno.open(image, { read: true });
  const sector = new Uint8Array(512);
  await f.read(sector);
  const e = decodeMbr(sector);
  if (e?.[0]?.type !== MBR_TYPE_FAT32_LBA || e[0].firstLba !== first || e[1]?.type !== 0xee) {
    throw new Error(`${image}: the hybrid MBR read back is ${JSON.stringify(e)}`);
  }
}
