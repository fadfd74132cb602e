/**
 * Key rotation for an unlocked LUKS2 volume, in two phases, as a pure plan:
 * first add every configured key the header lacks and prove each opens the
 * header; only when all of them are proven, kill the keyslots the config no
 * longer lists. A failed add or proof leaves every old slot in place, so a
 * rotation cut short (power loss, a wrong key) never leaves a volume that
 * only the lost key opened. A configured slot number already holding a key
 * of another kind is refused: a new key goes into a free slot, and the old
 * one is removed from the config afterwards.
 *
 * A configured `tpm` slot the header lacks (skipped at format: no TPM, no
 * signed policy yet) is carried by the same mechanism as an add: sealed in
 * phase 1 with the authorising key's authority when this node can seal and
 * prove it now, else left out with its reason. A `tpm` slot never gates
 * phase 2 (it is always an extra), and never goes into an active slot.
 * @module
 */
import type { EncryptionKeyConfig, VolumeEncryptionConfig } from "../../config/mod.ts";
import type { LuksSlot } from "../../platform/crypt/mod.ts";
import { describeKey, ENROLLABLE_KINDS } from "./decide_encryption.ts";

/** The plan; empty `add` and `kill` mean the header matches the config. */
export type RotationPlan =
  | {
    action: "rotate";
    /** Phase 1: enroll these keys (authorised by the key that unlocked). */
    add: EncryptionKeyConfig[];
    /** Phase 1: each added slot must open the header before phase 2 runs. */
    prove: number[];
    /** Phase 2: these keyslots are killed once every proof succeeded. */
    kill: number[];
    /** Phase 1: configured `tpm` slots the header lacks, to seal and prove (never gating phase 2). */
    seal: EncryptionKeyConfig[];
    /** Configured `tpm` slots left out, each with why (`slot 1 (tpm) skipped: …`); never a key. */
    notes: string[];
  }
  | { action: "refuse"; reason: string };

/** What the header lacks or holds beyond the config, before any key is tried. */
export interface PendingChanges {
  /** Enrollable keys whose slot is free. */
  add: EncryptionKeyConfig[];
  /** `tpm` keys whose slot is free, when the TPM can seal and prove now. */
  seal: EncryptionKeyConfig[];
  /** Active slots the config does not list. */
  kill: number[];
  /** Why a configured `tpm` slot the header lacks is not sealed in this pass. */
  notes: string[];
}

/** The configured `tpm` keys whose slot the header lacks (each a candidate to seal). Pure. */
export function missingTpmKeys(
  slots: readonly LuksSlot[],
  encryption: VolumeEncryptionConfig,
): EncryptionKeyConfig[] {
  const active = new Set(slots.map((s) => s.slot));
  return encryption.keys.filter((k) => k.kind === "tpm" && !active.has(k.slot));
}

/**
 * Compare the header with the config. `tpmUnready` is why this node cannot
 * seal and prove a `tpm` slot now (undefined: it can); a `tpm` key whose
 * slot holds another kind is never written over, only noted. Pure.
 */
export function pendingChanges(
  slots: readonly LuksSlot[],
  encryption: VolumeEncryptionConfig,
  tpmUnready: string | undefined,
): PendingChanges {
  const active = new Map(slots.map((s) => [s.slot, s]));
  const configured = new Set(encryption.keys.map((k) => k.slot));
  const notes: string[] = [];
  for (const k of encryption.keys) {
    const kind = active.get(k.slot)?.kind;
    if (k.kind === "tpm" && active.has(k.slot) && kind !== "tpm") {
      notes.push(
        `${describeKey(k)} not added: the header's slot ${k.slot} holds a ` +
          `${kind ?? "tokenless"} key`,
      );
    }
  }
  const missing = missingTpmKeys(slots, encryption);
  if (tpmUnready !== undefined) {
    notes.push(...missing.map((k) => `${describeKey(k)} skipped: ${tpmUnready}`));
  }
  return {
    add: encryption.keys.filter((k) => ENROLLABLE_KINDS.has(k.kind) && !active.has(k.slot)),
    seal: tpmUnready === undefined ? missing : [],
    kill: slots.map((s) => s.slot).filter((s) => !configured.has(s)).sort((a, b) => a - b),
    notes,
  };
}

/** Nothing to write: no key to add or seal, no slot to kill. Pure. */
export function nothingPending(c: PendingChanges): boolean {
  return c.add.length === 0 && c.seal.length === 0 && c.kill.length === 0;
}

/**
 * Plan from the header's active slots, the config, the slot that unlocked
 * the volume in this boot (proven by that unlock) and why the TPM cannot
 * seal now (undefined: it can; see {@link pendingChanges}). Pure.
 */
export function planRotation(
  volume: string,
  slots: readonly LuksSlot[],
  encryption: VolumeEncryptionConfig,
  unlockedBy: number,
  tpmUnready: string | undefined,
): RotationPlan {
  const active = new Map(slots.map((s) => [s.slot, s]));
  const wanted = encryption.keys.filter((k) => ENROLLABLE_KINDS.has(k.kind));
  for (const k of wanted) {
    const kind = active.get(k.slot)?.kind;
    if (kind !== undefined && kind !== k.kind) {
      return {
        action: "refuse",
        reason: `${volume}: ${describeKey(k)} is configured but the header's slot ${k.slot} ` +
          `holds a ${kind} key; put the new key in a free slot, then remove the old one`,
      };
    }
  }
  if (!wanted.some((k) => k.slot === unlockedBy)) {
    return {
      action: "refuse",
      reason: `${volume}: the key that unlocked it (slot ${unlockedBy}) is not in the config; ` +
        `keep it until a configured key has been proven`,
    };
  }
  // Configured tpm slots are kept (never killed); missing ones are sealed when the TPM can.
  const { add, seal, kill, notes } = pendingChanges(slots, encryption, tpmUnready);
  return { action: "rotate", add, prove: add.map((k) => k.slot), kill, seal, notes };
}

/** Phase 2 may run only when every slot phase 1 added opened the header. Pure. */
export function mayKill(plan: RotationPlan, proven: ReadonlySet<number>): boolean {
  return plan.action === "rotate" && plan.prove.every((s) => proven.has(s));
}
