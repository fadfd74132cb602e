/**
 * DiskStatus: one block device as discovery sees it (sysfs facts, partition
 * table, and how the provisioner would classify it), refreshed on every
 * rescan so that hotplugged or re-partitioned disks show up.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const DISK_STATUS = "DiskStatus";

/** What kind of device it is, from its name and the rotational flag. */
export type DiskKind = "hdd" | "ssd" | "nvme" | "sd" | "cdrom" | "loop" | "ram" | "virtual";

/**
 * What the disk holds, as the provisioner classifies it: `machined` (our
 * STATE + EPHEMERAL), `image` (only boot partitions, as flashed), `blank`,
 * `foreign` (someone else's data), or `unknown` when it could not be read.
 */
export type DiskLayout = "machined" | "image" | "blank" | "foreign" | "unknown";

/** One disk; the id is its kernel name (`vda`, `nvme0n1`, `loop3`). */
export interface DiskStatusSpec {
  /** Device node, e.g. `/dev/vda`. */
  readonly devicePath: string;
  /** `major:minor`. */
  readonly dev: string;
  /** Bytes. */
  readonly size: number;
  readonly logicalSectorSize: number;
  readonly physicalSectorSize: number;
  /** Empty when sysfs does not say. */
  readonly model: string;
  readonly serial: string;
  readonly wwid: string;
  readonly rotational: boolean;
  readonly readOnly: boolean;
  readonly removable: boolean;
  readonly kind: DiskKind;
  /** The file behind a loop device; empty otherwise. */
  readonly backingFile: string;
  readonly partitionTable: "gpt" | "mbr" | "none" | "unknown";
  /** GPT disk GUID; empty without a GPT. */
  readonly diskGuid: string;
  readonly partitions: number;
  readonly layout: DiskLayout;
  /** Why the disk could not be read (e.g. `ENOMEDIUM`); empty when it could. */
  readonly error: string;
}

export const diskStatusDescriptor: ResourceDescriptor<typeof DISK_STATUS, DiskStatusSpec> = {
  type: DISK_STATUS,
  namespace: "block",
  aliases: ["diskstatus", "diskstatuses", "disks", "disk"],
  description: "Block devices found in sysfs, with their partition table and layout",
  columns: [
    { header: "SIZE", value: (s) => String(s.size) },
    { header: "KIND", value: (s) => s.kind },
    { header: "MODEL", value: (s) => s.model },
    { header: "SERIAL", value: (s) => s.serial },
    { header: "TABLE", value: (s) => s.partitionTable },
    { header: "LAYOUT", value: (s) => s.layout },
    { header: "RO", value: (s) => String(s.readOnly) },
  ],
};
