/**
 * The block domain: disk discovery from sysfs, guarded provisioning of the
 * install disk's STATE and EPHEMERAL volumes, their mounts, and the record
 * on STATE of what machined created. The decision and the reset guard are
 * pure functions ({@link decideProvisioning}, {@link partitionsResetMayFormat}).
 *
 * @example
 * ```ts
 * import { blockControllers } from "./controllers/block/mod.ts";
 * import { NativeBlockBackend } from "./platform/block/mod.ts";
 * import { NativeMountBackend } from "./platform/mount/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const controllers = blockControllers({
 *   block: new NativeBlockBackend(),
 *   mounts: new NativeMountBackend(),
 *   process: nativeProcessBackend(),
 * });
 * // for (const c of controllers) runtime.register(c);
 * ```
 * @module
 */
import type { MachineConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import type { BlockBackend } from "../../platform/block/mod.ts";
import type { CryptBackend } from "../../platform/crypt/mod.ts";
import type { MountBackend } from "../../platform/mount/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type { UeventBackend } from "../../platform/uevent/mod.ts";
import type { MachineController, VolumeFilesystem } from "../../resources/mod.ts";
import { DiskDiscoveryController } from "./disk_discovery.ts";
import type { VolumeLayout } from "../../layout/mod.ts";
import type { KeySource } from "./luks_volume.ts";
import { ProvisioningRecordController } from "./provisioning_record.ts";
import { VolumeConfigController } from "./volume_config.ts";
import { VolumeMountController } from "./volume_mount.ts";
import { VolumeProvisionController } from "./volume_provision.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";

/** What the block controllers need. */
export interface BlockDeps {
  block: BlockBackend;
  mounts: MountBackend;
  process: ProcessBackend;
  events?: EventBus;
  /** Kernel uevents: disks appear and go at once; without, discovery rescans every 10 s. */
  uevents?: UeventBackend;
  /** @default "/sys" */
  sysfsRoot?: string;
  /** @default "/dev" */
  devRoot?: string;
  /** Discovery's full rescan period (ms). @default 60000 with uevents, 10000 without */
  resyncInterval?: number;
  /** Called once discovery's first full scan is in the store (late config's STATE lookup). */
  onFirstScan?: () => void;
  /** @default "/system/state" */
  stateMountPoint?: string;
  /** @default "/var" */
  ephemeralMountPoint?: string;
  /** EPHEMERAL's filesystem (STATE is always ext4). @default "ext4" */
  ephemeralFilesystem?: VolumeFilesystem;
  /** Sizes and alignment; see {@link DEFAULT_LAYOUT}. */
  layout?: Partial<VolumeLayout>;
  /** Overrides for tests: node waits, device resolution, mount point creation, GUIDs. */
  waitForDevice?: (path: string, signal: AbortSignal) => Promise<void>;
  resolveDevice?: (path: string) => Promise<string>;
  mkdir?: (path: string) => Promise<void>;
  newGuid?: () => string;
  /** LUKS2 for volumes with `machine.install.encryption`; without it they are refused. */
  crypt?: CryptBackend;
  /** Where `nodeid` keys come from. @default the board's SMBIOS UUID */
  keys?: KeySource;
  /** Passphrases supplied through UnlockVolume (boot/ shares it with the API action). */
  unlocker?: VolumeUnlocker;
  /** The config in force with its secrets (the store's copy is redacted). @default the store's */
  fullConfig?: () => MachineConfig | undefined;
}

/** The block domain's controllers, for the composition root to register. */
export function blockControllers(deps: BlockDeps): MachineController[] {
  return [
    new DiskDiscoveryController({
      backend: deps.block,
      mounts: deps.mounts,
      uevents: deps.uevents,
      sysfsRoot: deps.sysfsRoot,
      devRoot: deps.devRoot,
      resyncInterval: deps.resyncInterval,
      onFirstScan: deps.onFirstScan,
    }),
    new VolumeConfigController({
      stateSize: deps.layout?.stateSize,
      ephemeralFilesystem: deps.ephemeralFilesystem,
      stateMountPoint: deps.stateMountPoint,
      ephemeralMountPoint: deps.ephemeralMountPoint,
    }),
    new VolumeProvisionController({
      backend: deps.block,
      process: deps.process,
      mounts: deps.mounts,
      layout: deps.layout,
      waitForDevice: deps.waitForDevice,
      resolveDevice: deps.resolveDevice,
      events: deps.events,
      newGuid: deps.newGuid,
      crypt: deps.crypt,
      keys: deps.keys,
      unlocker: deps.unlocker,
      fullConfig: deps.fullConfig,
    }),
    new VolumeMountController({ mounts: deps.mounts, mkdir: deps.mkdir, events: deps.events }),
    new ProvisioningRecordController(),
  ];
}

export { DiskDiscoveryController, POLL_RESCAN_MS, UEVENT_RESCAN_MS } from "./disk_discovery.ts";
export { disksOfUevents } from "./disk_events.ts";
export { VolumeConfigController, volumeSpecs } from "./volume_config.ts";
export { VolumeProvisionController } from "./volume_provision.ts";
export { VolumeMountController } from "./volume_mount.ts";
export { ProvisioningRecordController } from "./provisioning_record.ts";
export {
  type ByteRange,
  classifyDisk,
  decideProvisioning,
  type InstallRequest,
  type ProvisioningDecision,
  type ProvisioningPlan,
  type RefuseCode,
} from "./decide_provisioning.ts";
export { partitionsResetMayFormat, type RecordForReset } from "./reset_may_format.ts";
export { type DiskFacts, gatherDiskFacts, type PartitionFacts } from "./disk_facts.ts";
export { mkfsArgv } from "./mkfs.ts";
export { readRecordFile, type RecordContent, RecordFileError } from "./record_file.ts";
export { ProvisionError } from "./provision_error.ts";
export type { KeySource } from "./luks_volume.ts";
export {
  MAX_PASSPHRASE_BYTES,
  type UnlockRefusal,
  type UnlockResult,
  VolumeUnlocker,
  VolumeUnlockError,
} from "./volume_unlock.ts";
export { type EncryptionOutcome, mappingName } from "./volume_encryption.ts";
export { type OpenedState, type StateBootDeps, StateBootOpener } from "./state_boot_open.ts";
export { closeTpmUnseal, TPM_CLOSING_PHASE } from "./tpm_keys.ts";
export {
  concludeStateBoot,
  decideStateBoot,
  STATE_LOCKED_CONDITION,
  type StateBootDecision,
} from "./state_boot.ts";
export { CommandError } from "./run_command.ts";
export { readSysfsDisks, type SysfsDisk } from "./sysfs_disks.ts";
export {
  type RecordOnDisk,
  type ResetTarget,
  resetTargets,
  wipeRanges,
  wipeResetTargets,
  type WipeResult,
} from "./reset_plan.ts";
export { partitionPath, resolveDevice } from "./device_path.ts";
