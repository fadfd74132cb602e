/**
 * VolumeStatus: how provisioning of one volume is going: the decision taken
 * for the install disk, each step's phase, and the error that stopped it.
 */
import type { ResourceDescriptor } from "../descriptor.ts";
import type { VolumeName } from "./volume_spec.ts";

/** Type name. */
export const VOLUME_STATUS = "VolumeStatus";

/** Steps of a volume's (and a mount's) life, in order; `failed` can follow any. */
export type VolumePhase =
  | "waiting"
  | "provisioning"
  | "formatting"
  | "mounting"
  | "ready"
  | "failed"
  /** An encrypted volume whose header no configured key opens: nothing is written to it. */
  | "locked";

/** An error as data: message plus the errno code and operation when from a syscall. */
export interface VolumeError {
  readonly message: string;
  /** Errno name (`EBUSY`) or a refusal code (`foreign-data`); empty when neither. */
  readonly code: string;
  /** The failing operation (`writeGpt`, `mkfs.ext4`, ...); empty when unknown. */
  readonly op: string;
}

/** A partition the provisioner created during this boot. */
export interface CreatedPartition {
  readonly number: number;
  readonly uuid: string;
  readonly type: string;
  readonly name: string;
  readonly firstLba: number;
  /** Inclusive. */
  readonly lastLba: number;
}

/**
 * The last decision that changed the disk (wrote a partition table or made a
 * filesystem) in this boot. Later passes find machined's layout and `leave` it,
 * so without this the status would hide what created STATE and EPHEMERAL.
 */
export interface VolumeAction {
  /** `create`, `complete`, `wipe`, or `leave` when it only formatted a blank partition. */
  readonly decision: string;
  /** The decision's reason. */
  readonly message: string;
  /** When it was carried out, RFC 3339 (UTC). */
  readonly at: string;
}

/** Which configured key opened an encrypted volume: its slot and kind, never the key. */
export interface VolumeUnlock {
  readonly slot: number;
  /** `nodeid` or `static`. */
  readonly kind: string;
}

/** One active keyslot of an encrypted volume's LUKS2 header (never its key). */
export interface VolumeKeySlot {
  readonly slot: number;
  /** The kind its `machined-<kind>` token names (`nodeid`, `static`, `tpm`); empty without one. */
  readonly kind: string;
  /** A key opened it, or proved it with `--test-passphrase`, in this boot. */
  readonly proven: boolean;
}

/** Where a rotation (docs/encryption.md, "Rotation") of the volume's keys is. */
export type RotationPhase =
  /** Phase 1: enrolling the configured keys the header lacks. */
  | "adding"
  /** Phase 1: testing that every added (and kept) slot opens the header. */
  | "proving"
  /** Phase 2: killing the slots the config dropped. */
  | "removing"
  /** Cut short or a proof failed: every old slot kept; tried again at the next reconcile. */
  | "stopped"
  /** No configured key opens the header to authorise it, or the plan refuses. */
  | "refused";

/** A rotation in progress, or one that did not finish. */
export interface VolumeRotation {
  readonly phase: RotationPhase;
  /** What it is doing, or why it stopped. */
  readonly message: string;
}

/** One volume; the id is its {@link VolumeName}. */
export interface VolumeStatusSpec {
  readonly volume: VolumeName;
  readonly phase: VolumePhase;
  /** The install disk's device node (resolved). */
  readonly disk: string;
  /** `leave`, `complete`, `create`, `wipe` or `refuse`; empty before a decision. */
  readonly decision: string;
  /** Why: the decision's reason, or what is awaited. */
  readonly message: string;
  /** Device node of the partition; empty until it exists. */
  readonly partitionPath: string;
  readonly partitionUuid: string;
  /** The filesystem on it (`ext4`, `xfs`); empty until made. */
  readonly filesystem: string;
  readonly filesystemUuid: string;
  /** Set when this boot created the partition, so it can be recorded on STATE. */
  readonly created: CreatedPartition | null;
  /** GPT disk GUID of the install disk; empty until known. */
  readonly diskGuid: string;
  readonly error: VolumeError | null;
  /** The decision that acted on the disk in this boot, and when; null when none did. */
  readonly acted: VolumeAction | null;
  /** The partition holds a LUKS2 volume (made or found); the filesystem is on {@link mappingPath}. */
  readonly encrypted: boolean;
  /** The dm-crypt mapping (`/dev/mapper/STATE`) mounted instead of the partition; empty when plain or not open. */
  readonly mappingPath: string;
  /** The key that opened it; null when plain, locked or not tried yet. */
  readonly unlockedBy: VolumeUnlock | null;
  /**
   * No configured key opens the header: the volume is left as it is (never
   * formatted) until a key is supplied. Phase `locked` says the same.
   */
  readonly locked: boolean;
  /** Why it is locked: each key tried and why it failed (never a key); empty when not locked. */
  readonly lockedReason: string;
  /** The header's active keyslots, by number; empty when plain or not read yet. */
  readonly keySlots: readonly VolumeKeySlot[];
  /** The key rotation in progress or stopped; null when none is (or it finished). */
  readonly rotation: VolumeRotation | null;
  /**
   * Configured keys skipped or tried in vain in this boot, with why (never a
   * key): `slot 2 (tpm) skipped: no TPM device (/dev/tpmrm0)` at format, or
   * `slot 2 (tpm): The TPM refused …` before another key opened it.
   */
  readonly keyNotes: readonly string[];
}

export const volumeStatusDescriptor: ResourceDescriptor<typeof VOLUME_STATUS, VolumeStatusSpec> = {
  type: VOLUME_STATUS,
  namespace: "block",
  aliases: ["volumestatus", "volumestatuses", "vs"],
  description: "Provisioning progress of the STATE and EPHEMERAL volumes",
  columns: [
    { header: "PHASE", value: (s) => s.phase },
    { header: "DECISION", value: (s) => s.decision },
    { header: "ACTED", value: (s) => (s.acted ? `${s.acted.decision} ${s.acted.at}` : "") },
    { header: "PARTITION", value: (s) => s.partitionPath },
    { header: "FS", value: (s) => s.filesystem },
    {
      header: "CRYPT",
      value: (s) =>
        !s.encrypted
          ? ""
          : s.locked
          ? "locked"
          : s.unlockedBy
          ? `${s.unlockedBy.kind}:${s.unlockedBy.slot}`
          : "luks2",
    },
    {
      header: "KEYS",
      value: (s) =>
        s.keySlots.map((k) => `${k.slot}:${k.kind || "?"}${k.proven ? "+" : ""}`).join(","),
    },
    { header: "ROTATION", value: (s) => s.rotation?.phase ?? "" },
    { header: "MESSAGE", value: (s) => s.error?.message ?? (s.lockedReason || s.message) },
  ],
};
