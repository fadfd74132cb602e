/**
 * VolumeSpec: what the machine config asks of one machined volume (STATE or
 * EPHEMERAL): which disk, how big, which filesystem, where to mount it.
 * Derived from `machine.install`; gone when there is nothing to install to.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const VOLUME_SPEC = "VolumeSpec";

/** The volumes machined provisions; also the ids of their specs and statuses. */
export type VolumeName = "STATE" | "EPHEMERAL";

/** Filesystems the provisioner can make. */
export type VolumeFilesystem = "ext4" | "xfs";

/**
 * `machine.install.encryption` for one volume, without key material: which
 * slots hold which key kind. Passphrases stay in the config.
 */
export interface VolumeEncryptionSpec {
  readonly cipher: string;
  readonly sectorSize: number;
  readonly allowDiscards: boolean;
  readonly keys: ReadonlyArray<{ readonly slot: number; readonly kind: string }>;
}

/** One volume to provision and mount; the id is its {@link VolumeName}. */
export interface VolumeSpecSpec {
  readonly volume: VolumeName;
  /** The install disk, as written in the config (may be a /dev/disk/by-* link). */
  readonly disk: string;
  /** `machine.install.wipe`: may a disk holding someone else's data be wiped. */
  readonly wipe: boolean;
  /**
   * `machine.install.system`: the system is installed on the disk first (install), so
   * provisioning waits until the disk holds an ESP.
   */
  readonly system: boolean;
  /** GPT partition name, also the filesystem label. */
  readonly partitionName: string;
  /** GPT partition type GUID. */
  readonly partitionType: string;
  /** Bytes; 0 means the rest of the free space. */
  readonly size: number;
  readonly filesystem: VolumeFilesystem;
  readonly mountPoint: string;
  /** mount(2) flags, e.g. `nosuid`, `nodev`. */
  readonly mountFlags: readonly string[];
  /** Set when the config asks for LUKS2 (docs/encryption.md); absent for a plain volume. */
  readonly encryption?: VolumeEncryptionSpec;
}

export const volumeSpecDescriptor: ResourceDescriptor<typeof VOLUME_SPEC, VolumeSpecSpec> = {
  type: VOLUME_SPEC,
  namespace: "block",
  aliases: ["volumespec", "volumespecs"],
  description: "Volumes (STATE, EPHEMERAL) the config asks for on the install disk",
  columns: [
    { header: "DISK", value: (s) => s.disk },
    { header: "SIZE", value: (s) => (s.size === 0 ? "rest" : String(s.size)) },
    { header: "FS", value: (s) => s.filesystem },
    { header: "MOUNT", value: (s) => s.mountPoint },
    { header: "WIPE", value: (s) => String(s.wipe) },
  ],
};
