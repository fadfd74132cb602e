/**
 * Install to disk, the decision: whether to write the system (GPT, an ESP
 * copied from the boot medium with systemd-boot and both slot directories)
 * onto `machine.install.disk`, as a pure function of the config, what is on
 * that disk and which disk the node booted from. STATE and EPHEMERAL are left
 * to the provisioner (controllers/block/decide_provisioning.ts), which with
 * `install.system` waits for the ESP this writes and then appends them.
 *
 * | install disk holds                          | wipe: false | wipe: true |
 * |---------------------------------------------|-------------|------------|
 * | (no `install.system`, or it is the boot disk) | none        | none       |
 * | nothing (missing), read-only, mounted        | refuse      | refuse     |
 * | our ESP (EFI at 1 MiB, the boot ESP's size)  | installed   | installed  |
 * | zeros, or an empty GPT                      | install     | install    |
 * | anything else (partitions, MBR, a filesystem) | refuse      | install    |
 *
 * The boot medium is never a target: a disk that is, or is a partition of,
 * the disk the node booted from is `none`/`refuse`, and without a known boot
 * medium nothing is written.
 * @module
 */
import type { DiskFacts } from "../controllers/block/mod.ts";
import {
  type DiskPlan,
  ESP_FIRST_LBA,
  PARTITION_NAME,
  partitionRole,
  planDisk,
  SECTOR_SIZE,
} from "../layout/mod.ts";

/** `machine.install` as the decision needs it. */
export interface InstallTarget {
  disk: string;
  wipe: boolean;
  /** `machine.install.system`: write the system onto the disk and boot from it. */
  system: boolean;
}

/** The disk the node booted from, and its ESP (as machined-init used it). */
export interface BootMedium {
  /** Whole-disk device node, e.g. `/dev/vda`. */
  disk: string;
  /** The ESP's partition number, first and last LBA (512-byte sectors). */
  esp: { number: number; firstLba: number; lastLba: number };
}

/** Why nothing may be written. */
export type InstallRefuseCode =
  | "unknown-boot-medium"
  | "boot-medium"
  | "missing"
  | "read-only"
  | "in-use"
  | "sector-size"
  | "too-small"
  | "foreign-data";

/** The outcome of {@link decideInstall}. */
export type InstallDecision =
  | { action: "none"; reason: string }
  | { action: "installed"; reason: string }
  | {
    action: "install";
    reason: string;
    /** The target's new table (an ESP at 1 MiB of the boot ESP's size) and where the ESP goes. */
    plan: DiskPlan;
    /** Bytes to copy from the boot medium's ESP. */
    copy: { from: number; to: number; length: number };
  }
  | { action: "refuse"; code: InstallRefuseCode; reason: string };

/** What {@link decideInstall} reads. */
export interface InstallInputs {
  install: InstallTarget | undefined;
  /** The install disk's facts, its path resolved to the device node; undefined when missing. */
  target: DiskFacts | undefined;
  boot: BootMedium | undefined;
  /** Room STATE and EPHEMERAL need after the ESP (bytes). */
  minFree: number;
  /** Source of new GUIDs (tests pass a deterministic one). @default crypto.randomUUID */
  newGuid?: () => string;
}

/** Decide whether to install the system on the install disk. Pure: reads only its arguments. */
export function decideInstall(i: InstallInputs): InstallDecision {
  const refuse = (code: InstallRefuseCode, reason: string) => ({
    action: "refuse" as const,
    code,
    reason,
  });
  if (!i.install?.system) return { action: "none", reason: "machine.install.system is not set" };
  const disk = i.install.disk;
  if (!i.target) return refuse("missing", `Install disk "${disk}" does not exist`);
  const t = i.target;
  if (!i.boot) {
    return refuse(
      "unknown-boot-medium",
      `Not installing to "${t.path}": the disk the node booted from is not known`,
    );
  }
  if (t.path === i.boot.disk) {
    return { action: "none", reason: `"${t.path}" is the boot medium: nothing to copy` };
  }
  if (isPartitionOf(t.path, i.boot.disk)) {
    return refuse("boot-medium", `Install disk "${t.path}" is a partition of the boot medium`);
  }
  if (t.readOnly) return refuse("read-only", `Install disk "${t.path}" is read-only`);
  if (t.mounted) return refuse("in-use", `Install disk "${t.path}" is mounted as a whole`);
  if (t.sectorSize !== SECTOR_SIZE) {
    return refuse("sector-size", `Install disk "${t.path}" has ${t.sectorSize}-byte sectors`);
  }
  const espSectors = i.boot.esp.lastLba - i.boot.esp.firstLba + 1;
  const parts = t.gpt?.partitions ?? [];
  if (parts.some((p) => isOurEsp(p, espSectors))) {
    return { action: "installed", reason: `"${t.path}" already holds the system's ESP` };
  }
  const blank = t.gpt ? parts.length === 0 : t.blank && !t.mbrPartitions && !t.wholeDiskFs;
  if (!blank && !i.install.wipe) {
    return refuse(
      "foreign-data",
      `Install disk "${t.path}" holds ${describe(t)}; set machine.install.wipe to use it`,
    );
  }
  const busy = parts.filter((p) => p.mounted);
  if (busy.length > 0) {
    return refuse("in-use", `Cannot wipe "${t.path}": partition ${busy[0].number} is mounted`);
  }
  const espSize = espSectors * SECTOR_SIZE;
  const need = ESP_FIRST_LBA * SECTOR_SIZE + espSize + i.minFree + 34 * SECTOR_SIZE;
  if (t.size < need) {
    return refuse(
      "too-small",
      `Install disk "${t.path}" has ${t.size} bytes; the ESP (${espSize}), STATE and ` +
        `EPHEMERAL need ${need}`,
    );
  }
  const newGuid = i.newGuid ?? (() => crypto.randomUUID());
  const plan = planDisk({
    size: BigInt(t.size),
    espSize: BigInt(espSize),
    diskGuid: newGuid(),
    espGuid: newGuid(),
  });
  return {
    action: "install",
    reason: blank
      ? `"${t.path}" is blank: installing the system from ${i.boot.disk}`
      : `Wiping ${describe(t)} on "${t.path}" (machine.install.wipe): installing the system ` +
        `from ${i.boot.disk}`,
    plan,
    copy: {
      from: i.boot.esp.firstLba * SECTOR_SIZE,
      to: Number(plan.layout.espOffset),
      length: espSize,
    },
  };
}

/** An ESP this install writes: type EFI, named EFI, at 1 MiB, of the boot ESP's size. */
function isOurEsp(p: { type: string; name: string; firstLba: number; lastLba: number }, n: number) {
  return partitionRole(p) === "efi" && p.name === PARTITION_NAME.EFI &&
    p.firstLba === ESP_FIRST_LBA && p.lastLba - p.firstLba + 1 === n;
}

/** `/dev/vda1` of `/dev/vda`, `/dev/nvme0n1p2` of `/dev/nvme0n1`. */
function isPartitionOf(path: string, disk: string): boolean {
  return path.startsWith(disk) && /^p?\d+$/.test(path.slice(disk.length));
}

function describe(t: DiskFacts): string {
  const parts = t.gpt?.partitions ?? [];
  if (parts.length > 0) return `partitions ${parts.map((p) => p.number).join(", ")}`;
  if (t.mbrPartitions) return "an MBR partition table";
  if (t.wholeDiskFs) return `a whole-disk ${t.wholeDiskFs.type} filesystem`;
  return "data that is not zero";
}
