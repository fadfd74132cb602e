/**
 * machined's disk layout in one place: the partition type GUIDs and names of
 * the boot partitions the imager writes and of the STATE and EPHEMERAL
 * partitions machined appends, the sizes, and how a partition is recognised.
 * This is the single home of the ESP's type and name: the imager
 * (`imager/disk_image.ts`) imports them from here, and both encode the table
 * with platform/block/gpt.ts.
 * @module
 */
import { GPT_TYPE, type GptPartition } from "../platform/block/mod.ts";

const MiB = 1024 * 1024;

/**
 * Partition type GUIDs. STATE, EPHEMERAL and the boot slots have machined's
 * own types, so nothing else on a disk is ever taken for them.
 */
export const PARTITION_TYPE = {
  EFI_SYSTEM: GPT_TYPE.EFI_SYSTEM,
  BIOS_BOOT: GPT_TYPE.BIOS_BOOT,
  /** A/B boot slot partitions (the imager currently keeps slots as files on the ESP). */
  BOOT_SLOT: "3f3fcfa4-e74f-49e3-89b9-7f74035138d3",
  STATE: "270cecda-5474-40f7-b05c-b041e9defe2a",
  EPHEMERAL: "695f0350-84a1-41b5-9d3d-bd9846a5821a",
} as const;

/** GPT partition names; STATE and EPHEMERAL are also their filesystem labels. */
export const PARTITION_NAME = {
  /** What the imager names its ESP. */
  EFI: "EFI",
  BOOT_A: "BOOT-A",
  BOOT_B: "BOOT-B",
  STATE: "STATE",
  EPHEMERAL: "EPHEMERAL",
} as const;

/** Where the volumes are mounted on a node. */
export const MOUNT_POINT = {
  STATE: "/system/state",
  EPHEMERAL: "/var",
} as const;

/** Name of the provisioning record file at the root of STATE. */
export const PROVISIONING_RECORD_FILE = "provisioned.json";

/** Sizes and alignment the provisioner lays partitions out with (bytes). */
export interface VolumeLayout {
  /** @default 100 MiB */
  stateSize: number;
  /** EPHEMERAL gets the rest, but at least this much. @default 64 MiB */
  minEphemeralSize: number;
  /** Partitions start on multiples of this. @default 1 MiB */
  alignment: number;
  /**
   * How much of the head of a new partition is zeroed before formatting, and
   * how much of a partition without a filesystem must be zero for it to count
   * as blank. @default 1 MiB
   */
  zeroBytes: number;
}

/** The layout on a node. */
export const DEFAULT_LAYOUT: VolumeLayout = {
  stateSize: 100 * MiB,
  minEphemeralSize: 64 * MiB,
  alignment: MiB,
  zeroBytes: MiB,
};

/** What machined makes of a partition. */
export type PartitionRole =
  | "efi"
  | "bios-boot"
  | "boot-a"
  | "boot-b"
  | "state"
  | "ephemeral"
  | "other";

type TypedPartition = Pick<GptPartition, "type" | "name">;

/** The role of a partition, by type GUID first and name second. */
export function partitionRole(p: TypedPartition): PartitionRole {
  switch (p.type) {
    case PARTITION_TYPE.EFI_SYSTEM:
      return "efi";
    case PARTITION_TYPE.BIOS_BOOT:
      return "bios-boot";
    case PARTITION_TYPE.BOOT_SLOT:
      return p.name === PARTITION_NAME.BOOT_B ? "boot-b" : "boot-a";
    case PARTITION_TYPE.STATE:
      return p.name === PARTITION_NAME.STATE ? "state" : "other";
    case PARTITION_TYPE.EPHEMERAL:
      return p.name === PARTITION_NAME.EPHEMERAL ? "ephemeral" : "other";
    default:
      return "other";
  }
}

/**
 * Boot partitions (ESP, BIOS boot, A/B slots) are never wiped, removed or
 * formatted by the provisioner or a reset, whatever the config says. Decided
 * by type GUID alone, so any ESP on the install disk is kept.
 */
export function isBootPartition(p: TypedPartition): boolean {
  return p.type === PARTITION_TYPE.EFI_SYSTEM || p.type === PARTITION_TYPE.BIOS_BOOT ||
    p.type === PARTITION_TYPE.BOOT_SLOT;
}
