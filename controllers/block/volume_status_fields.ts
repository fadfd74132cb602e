/**
 * The VolumeStatus fields the provisioner publishes, as pure functions: the
 * empty status a volume starts from, and what an encryption outcome adds.
 * @module
 */
import type { CreatedPartition, VolumeName, VolumeStatusSpec } from "../../resources/mod.ts";
import type { PartitionFacts } from "./disk_facts.ts";
import type { EncryptionOutcome } from "./volume_encryption.ts";
import type { KeyReport } from "./encryption_step.ts";

/** A status before anything is known. */
export function emptyStatus(volume: VolumeName): VolumeStatusSpec {
  return {
    volume,
    phase: "waiting",
    disk: "",
    decision: "",
    message: "",
    partitionPath: "",
    partitionUuid: "",
    filesystem: "",
    filesystemUuid: "",
    created: null,
    diskGuid: "",
    error: null,
    acted: null,
    encrypted: false,
    mappingPath: "",
    unlockedBy: null,
    locked: false,
    lockedReason: "",
    keySlots: [],
    rotation: null,
    keyNotes: [],
  };
}

/** Does `p` still have the extent this process created? */
export function sameExtent(c: CreatedPartition, p: PartitionFacts): boolean {
  return c.number === p.number && c.firstLba === p.firstLba && c.lastLba === p.lastLba &&
    c.type === p.type && c.name === p.name;
}

/**
 * What an encryption outcome sets on a volume's status (phase, filesystem,
 * mapping, key, lock, error, key slots and rotation); nothing for a plain
 * volume, whose fields come from the partition. Pure.
 */
export function encryptionFields(
  o: EncryptionOutcome,
  keys: KeyReport = { keySlots: [], rotation: null },
): Partial<VolumeStatusSpec> {
  if (o.kind === "plain") return {};
  return {
    ...outcomeFields(o),
    keySlots: keys.keySlots,
    rotation: keys.rotation,
    keyNotes: o.kind === "open" ? o.notes : [],
  };
}

function outcomeFields(
  o: Exclude<EncryptionOutcome, { kind: "plain" }>,
): Partial<VolumeStatusSpec> {
  switch (o.kind) {
    case "locked":
      return {
        phase: "locked",
        encrypted: true,
        locked: true,
        lockedReason: o.reason,
        filesystem: "",
        filesystemUuid: "",
        error: { message: o.reason, code: "locked", op: "unlock" },
      };
    case "refused":
      return {
        phase: "failed",
        encrypted: o.encrypted,
        filesystem: "",
        filesystemUuid: "",
        error: { message: o.reason, code: o.code, op: "decide" },
      };
    case "open":
      return {
        phase: o.fs ? "ready" : "failed",
        encrypted: true,
        mappingPath: o.mappingPath,
        unlockedBy: o.unlockedBy,
        locked: false,
        lockedReason: "",
        filesystem: o.fs?.type ?? "",
        filesystemUuid: o.fs?.uuid ?? "",
        error: o.fs ? null : { message: o.reason, code: "unrecognized-data", op: "probe" },
      };
  }
}
