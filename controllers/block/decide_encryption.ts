/**
 * What to do with one machined volume (STATE or EPHEMERAL) given what its
 * partition holds and `machine.install.encryption`, as pure functions:
 *
 * | partition holds              | encryption configured                   | not configured    |
 * |------------------------------|-----------------------------------------|-------------------|
 * | nothing (blank)              | format + encrypt, if provisioning may   | plain (as before) |
 * | a plain ext4/xfs filesystem  | refuse `plain-filesystem` (never converted in place) | plain |
 * | a LUKS2 header               | try the configured keys whose slot is active (tpm first) | refuse `not-configured` |
 * | anything else                | refuse `unrecognized-data`              | (provisioning's) |
 *
 * Formatting is only ever decided on a partition provisioning may format
 * (one it created in this pass or found blank and ours), so consent stays
 * with {@link decideProvisioning}. A header that no configured key opens
 * ends `locked` ({@link concludeUnlock}): the node serves maintenance with
 * the reason and never formats. Turning encryption on for a volume that has
 * data is an explicit operation: reset (which wipes STATE and EPHEMERAL) and
 * let provisioning make them again, encrypted.
 * @module
 */
import type { EncryptionKeyConfig, KeyKind, VolumeEncryptionConfig } from "../../config/mod.ts";
import type { LuksSlot } from "../../platform/crypt/mod.ts";

/** What a volume's partition holds, as probed. */
export type VolumeContent =
  | { kind: "blank" }
  | { kind: "filesystem"; type: string }
  | { kind: "luks"; slots: readonly LuksSlot[] }
  | { kind: "unrecognized" };

/** Why an encrypted volume is not opened. */
export type EncryptionRefusal =
  | "plain-filesystem"
  | "not-configured"
  | "unrecognized-data"
  | "no-consent"
  | "no-enrollable-key"
  | "locked";

/** The outcome of {@link decideEncryption}. */
export type EncryptionDecision =
  | { action: "plain"; reason: string }
  | {
    action: "format";
    reason: string;
    /** Keys machined derives itself; the first formats, the others are added by it. */
    keys: EncryptionKeyConfig[];
    /** `tpm` keys, sealed after the format (each skipped with its reason when no TPM takes it). */
    tpm: EncryptionKeyConfig[];
  }
  | { action: "unlock"; reason: string; candidates: EncryptionKeyConfig[] }
  | { action: "refuse"; code: EncryptionRefusal; reason: string };

/**
 * Key kinds whose key machined produces by itself (config, board): these
 * format a volume, authorise a rotation and are added by one. A `tpm` key
 * depends on the TPM being there and willing, so it is only ever an extra:
 * sealed after the format, tried first at unlock, never the only way in.
 */
export const ENROLLABLE_KINDS: ReadonlySet<KeyKind> = new Set(["static", "nodeid"]);

/** Kinds tried at unlock: every kind, `tpm` first. */
const UNLOCK_KINDS: ReadonlySet<KeyKind> = new Set(["tpm", "static", "nodeid"]);

/** Unlock order: the key that needs nothing from outside first, the recovery passphrase last. */
const ORDER: Record<KeyKind, number> = { tpm: 0, nodeid: 1, static: 2 };

/**
 * Decide for `volume`. `mayFormat` is provisioning's consent for this
 * partition (created now, or ours and blank). Pure.
 */
export function decideEncryption(
  volume: string,
  content: VolumeContent,
  encryption: VolumeEncryptionConfig | undefined,
  mayFormat: boolean,
): EncryptionDecision {
  const refuse = (code: EncryptionRefusal, reason: string) => ({
    action: "refuse" as const,
    code,
    reason,
  });
  const path = `machine.install.encryption.${volume.toLowerCase()}`;
  if (!encryption) {
    if (content.kind === "luks") {
      return refuse(
        "not-configured",
        `${volume} holds a LUKS2 header but ${path} is not set: add its keys to open it ` +
          `(it is never formatted over)`,
      );
    }
    return { action: "plain", reason: `${path} is not set` };
  }
  switch (content.kind) {
    case "blank": {
      if (!mayFormat) {
        return refuse("no-consent", `${volume} is blank but provisioning did not allow a format`);
      }
      const keys = encryption.keys.filter((k) => ENROLLABLE_KINDS.has(k.kind));
      const tpm = encryption.keys.filter((k) => k.kind === "tpm");
      if (keys.length === 0) {
        return refuse("no-enrollable-key", `${path} has no key this node can enroll`);
      }
      return {
        action: "format",
        reason: `${volume} is blank: encrypting it (LUKS2)`,
        keys,
        tpm,
      };
    }
    case "filesystem":
      return refuse(
        "plain-filesystem",
        `${volume} holds a plain ${content.type} filesystem but ${path} is set: it is never ` +
          `converted in place; to encrypt it, reset the node (wipes STATE and EPHEMERAL) and ` +
          `let it provision them again`,
      );
    case "unrecognized":
      return refuse(
        "unrecognized-data",
        `${volume} holds data that is neither LUKS2 nor a filesystem`,
      );
    case "luks":
      return decideUnlock(volume, content.slots, encryption);
  }
}

function decideUnlock(
  volume: string,
  slots: readonly LuksSlot[],
  encryption: VolumeEncryptionConfig,
): EncryptionDecision {
  const active = new Map(slots.map((s) => [s.slot, s]));
  const candidates = encryption.keys
    .filter((k) => UNLOCK_KINDS.has(k.kind) && active.has(k.slot))
    .filter((k) => {
      const kind = active.get(k.slot)?.kind;
      return kind === undefined || kind === k.kind;
    })
    .sort((a, b) => ORDER[a.kind] - ORDER[b.kind] || a.slot - b.slot);
  if (candidates.length === 0) {
    return {
      action: "refuse",
      code: "locked",
      reason: `${volume} is locked: no configured key matches an active keyslot (active: ${
        describeSlots(slots)
      })`,
    };
  }
  return {
    action: "unlock",
    reason: `${volume} is encrypted: trying ${candidates.map(describeKey).join(", ")}`,
    candidates,
  };
}

/** One try of a candidate key. */
export interface UnlockAttempt {
  key: EncryptionKeyConfig;
  opened: boolean;
  /** Why it did not open (never the key itself). */
  error?: string;
}

/** The result of trying keys: unlocked by the first that opened, or locked with every reason. */
export type UnlockOutcome =
  | { state: "unlocked"; slot: number; kind: KeyKind; reason: string }
  | { state: "locked"; reason: string };

/** Conclude from the attempts, in the order they were made. Pure. */
export function concludeUnlock(volume: string, attempts: readonly UnlockAttempt[]): UnlockOutcome {
  const ok = attempts.find((a) => a.opened);
  if (ok) {
    return {
      state: "unlocked",
      slot: ok.key.slot,
      kind: ok.key.kind,
      reason: `${volume} unlocked by ${describeKey(ok.key)}`,
    };
  }
  const why = attempts.map((a) => `${describeKey(a.key)}: ${a.error ?? "did not open"}`);
  return {
    state: "locked",
    reason: `${volume} is locked: no key opens it (${why.join("; ") || "no key tried"}); ` +
      `supply a key and reboot; the volume is never formatted`,
  };
}

/** `slot 1 (nodeid)`. */
export function describeKey(k: { slot: number; kind: string }): string {
  return `slot ${k.slot} (${k.kind})`;
}

function describeSlots(slots: readonly LuksSlot[]): string {
  return slots.map((s) => describeKey({ slot: s.slot, kind: s.kind ?? "no token" })).join(", ") ||
    "none";
}
