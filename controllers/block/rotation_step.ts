/**
 * Rotation on a config change, for a volume this process has open: when the
 * configured keys differ from the header's slots, find a configured key that
 * opens the header (it authorises the change and is proven by opening) and
 * run the two-phase {@link rotateVolume}: add and prove each new slot, then
 * kill the slots the config dropped. A rotation cut between its phases
 * (power loss, a failed kill) resumes on the next pass: the added slot is
 * then proven before any kill. Nothing is read with argon2id when the header
 * already matches the config.
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

/** What a pass did, and what it learned of the header. */
export type RotationOutcome =
  & (
    | { kind: "none" }
    | { kind: "rotated"; result: RotationResult; reason: string }
    | { kind: "stopped"; result?: RotationResult; reason: string }
    | { kind: "refused"; reason: string }
  )
  & {
    /** The header's active slots after the pass. */
    slots: readonly LuksSlot[];
    /** Slots a key opened in this pass (the authorising key and each proof). */
    proven: readonly number[];
  };

/** Rotate `lv` to `encryption`'s keys when they differ from its header. */
export async function rotateToConfig(
  lv: LuksVolume,
  encryption: VolumeEncryptionConfig,
  progress?: RotationProgress,
): Promise<RotationOutcome> {
  const slots = (await lv.crypt.dump(lv.device)).slots;
  const active = new Set(slots.map((s) => s.slot));
  const configured = new Set(encryption.keys.map((k) => k.slot));
  const wanted = encryption.keys.filter((k) => ENROLLABLE_KINDS.has(k.kind));
  const toAdd = wanted.filter((k) => !active.has(k.slot));
  const toKill = slots.filter((s) => !configured.has(s.slot));
  if (toAdd.length === 0 && toKill.length === 0) return { kind: "none", slots, proven: [] };
  const { outcome, key } = await unlockVolume(lv, wanted.filter((k) => active.has(k.slot)));
  if (outcome.state !== "unlocked" || !key) {
    return {
      kind: "refused",
      reason: `${lv.volume}: keys changed, but no configured key opens the header to authorise ` +
        `the rotation; old slots kept`,
      slots,
      proven: [],
    };
  }
  let result: RotationResult | undefined;
  try {
    result = await rotateVolume(lv, encryption, outcome.slot, key, progress);
  } finally {
    key.fill(0);
  }
  const after = {
    slots: (await lv.crypt.dump(lv.device)).slots,
    proven: [outcome.slot, ...result.proven],
  };
  if (result.stopped) return { kind: "stopped", result, reason: result.stopped, ...after };
  return { kind: "rotated", result, reason: describe(lv.volume, result, outcome.slot), ...after };
}

function describe(volume: string, r: RotationResult, by: number): string {
  const list = (xs: number[]) => xs.length ? xs.join(",") : "none";
  return `${volume} rotated (authorised by slot ${by}): added ${list(r.added)}, ` +
    `proven ${list(r.proven)}, removed ${list(r.killed)}`;
}
