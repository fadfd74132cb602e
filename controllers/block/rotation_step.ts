/**
 * Rotation on a config change, for a volume this process has open: when the
 * configured keys differ from the header's slots, find a configured key that
 * opens the header (it authorises the change and is proven by opening) and
 * run the two-phase {@link rotateVolume}: add and prove each new slot, then
 * kill the slots the config dropped. A rotation cut between its phases
 * (power loss, a failed kill) resumes on the next pass: the added slot is
 * then proven before any kill. A configured `tpm` slot the header lacks
 * (skipped at format) is an add of the same pass, sealed once the TPM can
 * seal and prove it; until then it is a note. Nothing is read with argon2id
 * when the header already matches the config, or lacks only `tpm` slots
 * this node cannot seal now.
 * @module
 */
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import type { LuksSlot } from "../../platform/crypt/mod.ts";
import { ENROLLABLE_KINDS } from "./decide_encryption.ts";
import {
  type LuksVolume,
  rotateVolume,
  type RotationProgress,
  type RotationResult,
  unlockVolume,
} from "./luks_volume.ts";
import { missingTpmKeys, nothingPending, pendingChanges } from "./plan_rotation.ts";
import { tpmSealReadiness } from "./tpm_keys.ts";

/** What a pass did, and what it learned of the header. */
export type RotationOutcome =
  & (
    | { kind: "none" }
    | { kind: "rotated"; result: RotationResult; reason: string }
    /** Only `tpm` slots were to be added and none could be (the reasons are in `notes`). */
    | { kind: "skipped"; result: RotationResult; reason: string }
    | { kind: "stopped"; result?: RotationResult; reason: string }
    | { kind: "refused"; reason: string }
  )
  & {
    /** The header's active slots after the pass. */
    slots: readonly LuksSlot[];
    /** Slots a key opened in this pass (the authorising key and each proof). */
    proven: readonly number[];
    /** The configured `tpm` slots the header lacked before the pass. */
    tpmMissing: readonly number[];
    /** Why each of them is still missing (`slot 1 (tpm) skipped: …`); never a key. */
    notes: readonly string[];
  };

/** Rotate `lv` to `encryption`'s keys when they differ from its header. */
export async function rotateToConfig(
  lv: LuksVolume,
  encryption: VolumeEncryptionConfig,
  progress?: RotationProgress,
): Promise<RotationOutcome> {
  const slots = (await lv.crypt.dump(lv.device)).slots;
  const tpmMissing = missingTpmKeys(slots, encryption).map((k) => k.slot);
  // The TPM is asked only when a configured tpm slot is missing.
  const tpmUnready = tpmMissing.length > 0 ? await tpmSealReadiness(lv) : "not needed";
  const pending = pendingChanges(slots, encryption, tpmUnready);
  const base = { slots, proven: [] as number[], tpmMissing, notes: pending.notes };
  if (nothingPending(pending)) return { kind: "none", ...base };
  const active = new Set(slots.map((s) => s.slot));
  const wanted = encryption.keys.filter((k) => ENROLLABLE_KINDS.has(k.kind));
  const { outcome, key } = await unlockVolume(lv, wanted.filter((k) => active.has(k.slot)));
  if (outcome.state !== "unlocked" || !key) {
    return {
      kind: "refused",
      reason: `${lv.volume}: keys changed, but no configured key opens the header to authorise ` +
        `the rotation; old slots kept`,
      ...base,
    };
  }
  let result: RotationResult | undefined;
  try {
    result = await rotateVolume(lv, encryption, outcome.slot, key, progress, {
      unready: tpmUnready,
    });
  } finally {
    key.fill(0);
  }
  const after = {
    slots: (await lv.crypt.dump(lv.device)).slots,
    proven: [outcome.slot, ...result.proven, ...result.sealed],
    tpmMissing,
    notes: result.notes,
  };
  if (result.stopped) return { kind: "stopped", result, reason: result.stopped, ...after };
  const changed = result.added.length + result.killed.length + result.sealed.length > 0;
  if (!changed) {
    const reason = `${lv.volume}: ${result.notes.join("; ")}; nothing else changed`;
    return { kind: "skipped", result, reason, ...after };
  }
  return { kind: "rotated", result, reason: describe(lv.volume, result, outcome.slot), ...after };
}

function describe(volume: string, r: RotationResult, by: number): string {
  const list = (xs: number[]) => xs.length ? xs.join(",") : "none";
  const tpm = r.sealed.length ? `; tpm slots ${list(r.sealed)} sealed and proven by unsealing` : "";
  const notes = r.notes.length ? `; ${r.notes.join("; ")}` : "";
  return `${volume} rotated (authorised by slot ${by}): added ${list(r.added)}, ` +
    `proven ${list(r.proven)}, removed ${list(r.killed)}${tpm}${notes}`;
}
