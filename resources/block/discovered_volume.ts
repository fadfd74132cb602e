/**
 * DiscoveredVolume: a partition, or a filesystem on a whole disk, found by
 * discovery, with its GPT identity and the filesystem its superblock names.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const DISCOVERED_VOLUME = "DiscoveredVolume";

/** One volume; the id is the kernel name of the partition (`vda2`) or of the disk. */
export interface DiscoveredVolumeSpec {
  /** Kernel name of the disk it is on. */
  readonly disk: string;
  /** Device node of the partition (or of the disk for a whole-disk filesystem). */
  readonly devicePath: string;
  /** 0 for a whole-disk filesystem. */
  readonly partitionNumber: number;
  /** Byte offset on the disk and size in bytes. */
  readonly offset: number;
  readonly size: number;
  /** GPT partition type GUID; empty when not from a GPT. */
  readonly partitionType: string;
  /** GPT unique partition GUID; empty when not from a GPT. */
  readonly partitionUuid: string;
  /** GPT partition name (`EFI`, `STATE`, ...); empty when none. */
  readonly partitionLabel: string;
  /**
   * What machined makes of it: `efi`, `bios-boot`, `boot-a`, `boot-b`,
   * `state`, `ephemeral`, or `other`.
   */
  readonly role: string;
  /** `ext4`, `xfs`, `vfat`, `swap`...; empty when no known superblock. */
  readonly filesystem: string;
  readonly filesystemLabel: string;
  readonly filesystemUuid: string;
  /** Whether the kernel has a node for it (a partition it knows about). */
  readonly inKernel: boolean;
}

export const discoveredVolumeDescriptor: ResourceDescriptor<
  typeof DISCOVERED_VOLUME,
  DiscoveredVolumeSpec
> = {
  type: DISCOVERED_VOLUME,
  namespace: "block",
  aliases: ["discoveredvolume", "discoveredvolumes", "dv", "volumes"],
  description: "Partitions and filesystems found on the disks",
  columns: [
    { header: "DISK", value: (s) => s.disk },
    { header: "SIZE", value: (s) => String(s.size) },
    { header: "PARTLABEL", value: (s) => s.partitionLabel },
    { header: "ROLE", value: (s) => s.role },
    { header: "FS", value: (s) => s.filesystem },
    { header: "LABEL", value: (s) => s.filesystemLabel },
    { header: "UUID", value: (s) => s.filesystemUuid },
  ],
};
