/**
 * Key rotation for an unlocked LUKS2 volume, in two phases, as a pure plan:
 * first add every configured key the header lacks and prove each opens the
 * header; only when all of them are proven, kill the keyslots the config no
 * longer lists. A failed add or proof leaves every old slot in place, so a
 * rotation cut short (power loss, a wrong key) never leaves a volume that
 * only the lost key opened. A configured slot number already holding a key
 * of another kind is refused: a new key goes into a free slot, and the old
 * one is removed from the config afterwards.
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
  }
  | { action: "refuse"; reason: string };

/**
 * Plan from the header's active slots, the config and the slot that unlocked
 * the volume in this boot (proven by that unlock). Pure.
 */
export function planRotation(
  volume: string,
  slots: readonly LuksSlot[],
  encryption: VolumeEncryptionConfig,
  unlockedBy: number,
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
  const add = wanted.filter((k) => !active.has(k.slot));
  // Configured tpm slots are kept: this node cannot prove them yet, nor re-add them.
  const keep = new Set(encryption.keys.map((k) => k.slot));
  const kill = slots.map((s) => s.slot).filter((s) => !keep.has(s)).sort((a, b) => a - b);
  return { action: "rotate", add, prove: add.map((k) => k.slot), kill };
}

/** Phase 2 may run only when every slot phase 1 added opened the header. Pure. */
export function mayKill(plan: RotationPlan, proven: ReadonlySet<number>): boolean {
  return plan.action === "rotate" && plan.prove.every((s) => proven.has(s));
}
