/**
 * Block resource specs ⇄ their proto messages (block.proto): string unions
 * become enums (typed over the union, so a new member fails type-checking
 * here), `null` becomes an unset message field, byte counts become uint64.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/block_pb.ts";
import type {
  CreatedPartition,
  DiscoveredVolumeSpec,
  DiskStatusSpec,
  MountStatusSpec,
  ProvisioningRecordSpec,
  RotationPhase,
  VolumeError,
  VolumeSpecSpec,
  VolumeStatusSpec,
} from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";
import { ResourceMappingError } from "./mapping_error.ts";

const diskKind = enumPair<DiskStatusSpec["kind"], pb.DiskKind>({
  hdd: pb.DiskKind.HDD,
  ssd: pb.DiskKind.SSD,
  nvme: pb.DiskKind.NVME,
  sd: pb.DiskKind.SD,
  cdrom: pb.DiskKind.CDROM,
  loop: pb.DiskKind.LOOP,
  ram: pb.DiskKind.RAM,
  virtual: pb.DiskKind.VIRTUAL,
}, "disk kind");
const partitionTable = enumPair<DiskStatusSpec["partitionTable"], pb.PartitionTable>({
  gpt: pb.PartitionTable.GPT,
  mbr: pb.PartitionTable.MBR,
  none: pb.PartitionTable.NONE,
  unknown: pb.PartitionTable.UNKNOWN,
}, "partition table");
const diskLayout = enumPair<DiskStatusSpec["layout"], pb.DiskLayout>({
  machined: pb.DiskLayout.MACHINED,
  image: pb.DiskLayout.IMAGE,
  blank: pb.DiskLayout.BLANK,
  foreign: pb.DiskLayout.FOREIGN,
  unknown: pb.DiskLayout.UNKNOWN,
}, "disk layout");
const volumeName = enumPair<VolumeSpecSpec["volume"], pb.VolumeName>({
  STATE: pb.VolumeName.STATE,
  EPHEMERAL: pb.VolumeName.EPHEMERAL,
}, "volume name");
const volumeFilesystem = enumPair<VolumeSpecSpec["filesystem"], pb.VolumeFilesystem>({
  ext4: pb.VolumeFilesystem.EXT4,
  xfs: pb.VolumeFilesystem.XFS,
}, "volume filesystem");
const volumePhase = enumPair<VolumeStatusSpec["phase"], pb.VolumePhase>({
  waiting: pb.VolumePhase.WAITING,
  provisioning: pb.VolumePhase.PROVISIONING,
  formatting: pb.VolumePhase.FORMATTING,
  mounting: pb.VolumePhase.MOUNTING,
  ready: pb.VolumePhase.READY,
  failed: pb.VolumePhase.FAILED,
  locked: pb.VolumePhase.LOCKED,
}, "volume phase");
const rotationPhase = enumPair<RotationPhase, pb.RotationPhase>({
  adding: pb.RotationPhase.ADDING,
  proving: pb.RotationPhase.PROVING,
  removing: pb.RotationPhase.REMOVING,
  stopped: pb.RotationPhase.STOPPED,
  refused: pb.RotationPhase.REFUSED,
}, "rotation phase");

/** DiskStatus → proto. */
export function diskStatusToProto(s: DiskStatusSpec): pb.DiskStatusSpec {
  return create(pb.DiskStatusSpecSchema, {
    ...s,
    size: BigInt(s.size),
    kind: diskKind.to(s.kind),
    partitionTable: partitionTable.to(s.partitionTable),
    layout: diskLayout.to(s.layout),
  });
}

/** Proto → DiskStatus. @throws ResourceMappingError for an unknown enum value. */
export function diskStatusFromProto(m: pb.DiskStatusSpec): DiskStatusSpec {
  return {
    devicePath: m.devicePath,
    dev: m.dev,
    size: Number(m.size),
    logicalSectorSize: m.logicalSectorSize,
    physicalSectorSize: m.physicalSectorSize,
    model: m.model,
    serial: m.serial,
    wwid: m.wwid,
    rotational: m.rotational,
    readOnly: m.readOnly,
    removable: m.removable,
    kind: diskKind.from(m.kind),
    backingFile: m.backingFile,
    partitionTable: partitionTable.from(m.partitionTable),
    diskGuid: m.diskGuid,
    partitions: m.partitions,
    layout: diskLayout.from(m.layout),
    error: m.error,
  };
}

/** DiscoveredVolume → proto. */
export function discoveredVolumeToProto(s: DiscoveredVolumeSpec): pb.DiscoveredVolumeSpec {
  return create(pb.DiscoveredVolumeSpecSchema, {
    ...s,
    offset: BigInt(s.offset),
    size: BigInt(s.size),
  });
}

/** Proto → DiscoveredVolume. */
export function discoveredVolumeFromProto(m: pb.DiscoveredVolumeSpec): DiscoveredVolumeSpec {
  return {
    disk: m.disk,
    devicePath: m.devicePath,
    partitionNumber: m.partitionNumber,
    offset: Number(m.offset),
    size: Number(m.size),
    partitionType: m.partitionType,
    partitionUuid: m.partitionUuid,
    partitionLabel: m.partitionLabel,
    role: m.role,
    filesystem: m.filesystem,
    filesystemLabel: m.filesystemLabel,
    filesystemUuid: m.filesystemUuid,
    inKernel: m.inKernel,
  };
}

/** VolumeSpec → proto. */
export function volumeSpecToProto(s: VolumeSpecSpec): pb.VolumeSpecSpec {
  return create(pb.VolumeSpecSpecSchema, {
    ...s,
    volume: volumeName.to(s.volume),
    size: BigInt(s.size),
    filesystem: volumeFilesystem.to(s.filesystem),
    mountFlags: [...s.mountFlags],
  });
}

/** Proto → VolumeSpec. @throws ResourceMappingError for an unknown enum value. */
export function volumeSpecFromProto(m: pb.VolumeSpecSpec): VolumeSpecSpec {
  return {
    volume: volumeName.from(m.volume),
    disk: m.disk,
    wipe: m.wipe,
    system: m.system,
    partitionName: m.partitionName,
    partitionType: m.partitionType,
    size: Number(m.size),
    filesystem: volumeFilesystem.from(m.filesystem),
    mountPoint: m.mountPoint,
    mountFlags: [...m.mountFlags],
  };
}

/** VolumeStatus → proto. */
export function volumeStatusToProto(s: VolumeStatusSpec): pb.VolumeStatusSpec {
  return create(pb.VolumeStatusSpecSchema, {
    ...s,
    volume: volumeName.to(s.volume),
    phase: volumePhase.to(s.phase),
    created: s.created ? partitionToProto(s.created) : undefined,
    error: s.error ? errorToProto(s.error) : undefined,
    acted: s.acted ? create(pb.VolumeActionSchema, s.acted) : undefined,
    unlockedBy: s.unlockedBy ? create(pb.VolumeUnlockSchema, s.unlockedBy) : undefined,
    keySlots: s.keySlots.map((k) => create(pb.VolumeKeySlotSchema, k)),
    keyNotes: [...s.keyNotes],
    rotation: s.rotation
      ? create(pb.VolumeRotationSchema, {
        phase: rotationPhase.to(s.rotation.phase),
        message: s.rotation.message,
      })
      : undefined,
  });
}

/** Proto → VolumeStatus. @throws ResourceMappingError for an unknown enum value. */
export function volumeStatusFromProto(m: pb.VolumeStatusSpec): VolumeStatusSpec {
  return {
    volume: volumeName.from(m.volume),
    phase: volumePhase.from(m.phase),
    disk: m.disk,
    decision: m.decision,
    message: m.message,
    partitionPath: m.partitionPath,
    partitionUuid: m.partitionUuid,
    filesystem: m.filesystem,
    filesystemUuid: m.filesystemUuid,
    created: m.created ? partitionFromProto(m.created) : null,
    diskGuid: m.diskGuid,
    error: m.error ? errorFromProto(m.error) : null,
    acted: m.acted
      ? { decision: m.acted.decision, message: m.acted.message, at: m.acted.at }
      : null,
    encrypted: m.encrypted,
    mappingPath: m.mappingPath,
    unlockedBy: m.unlockedBy ? { slot: m.unlockedBy.slot, kind: m.unlockedBy.kind } : null,
    locked: m.locked,
    lockedReason: m.lockedReason,
    keySlots: m.keySlots.map((k) => ({ slot: k.slot, kind: k.kind, proven: k.proven })),
    rotation: m.rotation
      ? { phase: rotationPhase.from(m.rotation.phase), message: m.rotation.message }
      : null,
    keyNotes: [...m.keyNotes],
  };
}

/** MountStatus → proto. */
export function mountStatusToProto(s: MountStatusSpec): pb.MountStatusSpec {
  return create(pb.MountStatusSpecSchema, {
    ...s,
    volume: volumeName.to(s.volume),
    phase: volumePhase.to(s.phase),
    flags: [...s.flags],
    error: s.error ? errorToProto(s.error) : undefined,
  });
}

/** Proto → MountStatus. @throws ResourceMappingError for an unknown enum value. */
export function mountStatusFromProto(m: pb.MountStatusSpec): MountStatusSpec {
  return {
    volume: volumeName.from(m.volume),
    phase: volumePhase.from(m.phase),
    mounted: m.mounted,
    source: m.source,
    target: m.target,
    filesystem: m.filesystem,
    flags: [...m.flags],
    message: m.message,
    error: m.error ? errorFromProto(m.error) : null,
  };
}

/** ProvisioningRecord → proto. */
export function provisioningRecordToProto(s: ProvisioningRecordSpec): pb.ProvisioningRecordSpec {
  return create(pb.ProvisioningRecordSpecSchema, {
    ...s,
    partitions: s.partitions.map(partitionToProto),
  });
}

/** Proto → ProvisioningRecord. @throws ResourceMappingError for a record version other than 1. */
export function provisioningRecordFromProto(m: pb.ProvisioningRecordSpec): ProvisioningRecordSpec {
  if (m.version !== 1) {
    throw new ResourceMappingError(
      "version",
      `Unknown provisioning record version ${m.version} (expected 1)`,
    );
  }
  return {
    version: 1,
    disk: m.disk,
    diskGuid: m.diskGuid,
    updatedAt: m.updatedAt,
    partitions: m.partitions.map(partitionFromProto),
    path: m.path,
  };
}

function partitionToProto(p: CreatedPartition): pb.CreatedPartition {
  return create(pb.CreatedPartitionSchema, {
    ...p,
    firstLba: BigInt(p.firstLba),
    lastLba: BigInt(p.lastLba),
  });
}

function partitionFromProto(p: pb.CreatedPartition): CreatedPartition {
  return {
    number: p.number,
    uuid: p.uuid,
    type: p.type,
    name: p.name,
    firstLba: Number(p.firstLba),
    lastLba: Number(p.lastLba),
  };
}

function errorToProto(e: VolumeError): pb.VolumeError {
  return create(pb.VolumeErrorSchema, { message: e.message, code: e.code, op: e.op });
}

function errorFromProto(e: pb.VolumeError): VolumeError {
  return { message: e.message, code: e.code, op: e.op };
}
