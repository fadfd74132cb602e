/**
 * Carries out the encryption decisions on one volume through a CryptBackend:
 * format (first key, then the others, each with a `machined-<kind>` token in
 * the header), unlock (candidates in order; locked when none opens) and the
 * two-phase rotation. Keys are resolved here from the config (static), the
 * board (nodeid) or the TPM (tpm: sealed at format, unsealed from the slot's
 * token, tpm_keys.ts) and handed to the backend as bytes; they never enter
 * an error message, a status or an event.
 * @module
 */
import {
  type EncryptionKeyConfig,
  REDACTED,
  type VolumeEncryptionConfig,
} from "../../config/mod.ts";
import {
  type CryptBackend,
  nodeIdKey,
  type Pbkdf,
  TOKEN_PREFIX,
  type TpmKeys,
} from "../../platform/crypt/mod.ts";
import {
  concludeUnlock,
  describeKey,
  ENROLLABLE_KINDS,
  type UnlockAttempt,
  type UnlockOutcome,
} from "./decide_encryption.ts";
import { mayKill, planRotation } from "./plan_rotation.ts";
import { slotPbkdf } from "./key_derivation.ts";
import { addTpmKey, enrollTpmKey, unsealTpmKey } from "./tpm_keys.ts";

/** Where keys come from. */
export interface KeySource {
  /** The board's SMBIOS UUID; rejects on a machine without one. */
  smbiosUuid(): Promise<string>;
  /** The TPM for `tpm` slots; without it they are skipped at format and not opened. */
  tpm?: TpmKeys;
}

/** One volume on one device. */
export interface LuksVolume {
  crypt: CryptBackend;
  keys: KeySource;
  /** `STATE` or `EPHEMERAL`: the LUKS2 label and the nodeid key's context. */
  volume: string;
  device: string;
  /** A passphrase slot's derivation (machine-made keys get slotPbkdf's). @default DEFAULT_PBKDF */
  pbkdf?: Pbkdf;
}

/** The key bytes of `k` for `volume`. @throws when the source cannot produce it. */
export async function keyBytes(v: LuksVolume, k: EncryptionKeyConfig): Promise<Uint8Array> {
  switch (k.kind) {
    case "static":
      // The store's copy of the config is redacted: never enroll or try the placeholder.
      if (k.passphrase === REDACTED) {
        throw new RangeError(`slot ${k.slot}: the passphrase is not available (redacted copy)`);
      }
      return new TextEncoder().encode(k.passphrase ?? "");
    case "nodeid":
      return await nodeIdKey(await v.keys.smbiosUuid(), v.volume);
    case "tpm":
      return await unsealTpmKey(v, k.slot);
  }
}

async function enroll(v: LuksVolume, k: EncryptionKeyConfig): Promise<void> {
  await v.crypt.importToken(v.device, k.slot, {
    type: `${TOKEN_PREFIX}${k.kind}`,
    keyslots: [k.slot],
  });
}

/** What a format enrolled beyond `keys`: the `tpm` slots sealed, and why any was skipped. */
export interface FormatResult {
  sealed: number[];
  /** `slot 2 (tpm) skipped: no TPM device (/dev/tpmrm0)`; never a key. */
  notes: string[];
}

/**
 * Format `device` with `keys` (the first authorises the others), each with
 * its token; then seal each of `tpm` into its slot, authorised by the first
 * key. A `tpm` slot the TPM cannot take is skipped with its reason.
 */
export async function formatVolume(
  v: LuksVolume,
  encryption: VolumeEncryptionConfig,
  keys: readonly EncryptionKeyConfig[],
  tpm: readonly EncryptionKeyConfig[] = [],
): Promise<FormatResult> {
  const [first, ...rest] = keys;
  // Every key first: one that cannot be produced stops the format before anything is written.
  const bytes = await Promise.all(keys.map((k) => keyBytes(v, k)));
  const firstKey = bytes[0];
  await v.crypt.format(v.device, firstKey, {
    slot: first.slot,
    cipher: encryption.cipher,
    sectorSize: encryption.sector_size,
    pbkdf: slotPbkdf(first.kind, v.pbkdf),
    label: v.volume,
  });
  await enroll(v, first);
  for (const [i, k] of rest.entries()) {
    await v.crypt.addKey(v.device, firstKey, bytes[i + 1], k.slot, slotPbkdf(k.kind, v.pbkdf));
    await enroll(v, k);
  }
  const result: FormatResult = { sealed: [], notes: [] };
  for (const k of tpm) {
    const skipped = await enrollTpmKey(v, k.slot, firstKey);
    if (skipped === undefined) result.sealed.push(k.slot);
    else result.notes.push(`${describeKey(k)} skipped: ${skipped}`);
  }
  return result;
}

/**
 * Try `candidates` in order; the first that opens the header wins. Nothing is
 * mapped. `notes` says why each key tried before the winner did not open
 * (a TPM that refused, then the static key opened).
 */
export async function unlockVolume(
  v: LuksVolume,
  candidates: readonly EncryptionKeyConfig[],
): Promise<{ outcome: UnlockOutcome; key?: Uint8Array; notes: string[] }> {
  const attempts: UnlockAttempt[] = [];
  for (const k of candidates) {
    try {
      const bytes = await keyBytes(v, k);
      if (await v.crypt.testKey(v.device, bytes, k.slot)) {
        const notes = attempts.map((a) => `${describeKey(a.key)}: ${a.error ?? "did not open"}`);
        attempts.push({ key: k, opened: true });
        return { outcome: concludeUnlock(v.volume, attempts), key: bytes, notes };
      }
      attempts.push({ key: k, opened: false });
    } catch (e) {
      attempts.push({ key: k, opened: false, error: (e as Error).message });
    }
  }
  return { outcome: concludeUnlock(v.volume, attempts), notes: [] };
}

/** What a rotation did. */
export interface RotationResult {
  added: number[];
  proven: number[];
  killed: number[];
  /** `tpm` slots sealed, added and proven by unsealing (a slot skipped at format, added now). */
  sealed: number[];
  /** Configured `tpm` slots not sealed, each with why; never a key. */
  notes: string[];
  /** Why it stopped before phase 2, or why it was refused. */
  stopped?: string;
}

/** Where a rotation is, for VolumeStatus while it runs. */
export type RotationProgress = (phase: "adding" | "proving" | "removing", message: string) => void;

/**
 * Rotate to the configured keys: add and prove each new slot, seal and prove
 * each configured `tpm` slot the header lacks (when `tpm.unready` is
 * undefined: the TPM can now; see tpmSealReadiness), then kill the slots the config dropped, only
 * if every proof of an enrollable key held. `key` opened `unlockedBy`.
 * `progress` hears each phase as it starts.
 */
export async function rotateVolume(
  v: LuksVolume,
  encryption: VolumeEncryptionConfig,
  unlockedBy: number,
  key: Uint8Array,
  progress: RotationProgress = () => {},
  tpm: { unready: string | undefined } = { unready: "not asked" },
): Promise<RotationResult> {
  const header = (await v.crypt.dump(v.device)).slots;
  const plan = planRotation(v.volume, header, encryption, unlockedBy, tpm.unready);
  const r: RotationResult = { added: [], proven: [], killed: [], sealed: [], notes: [] };
  if (plan.action === "refuse") return { ...r, stopped: plan.reason };
  r.notes.push(...plan.notes);
  const slots = (xs: number[]) => xs.join(",") || "none";
  const adding = [...plan.prove, ...plan.seal.map((k) => k.slot)];
  if (adding.length > 0) progress("adding", `adding slots ${slots(adding)}`);
  for (const k of plan.add) {
    const bytes = await keyBytes(v, k);
    await v.crypt.addKey(v.device, key, bytes, k.slot, slotPbkdf(k.kind, v.pbkdf));
    await enroll(v, k);
    r.added.push(k.slot);
    if (await v.crypt.testKey(v.device, bytes, k.slot)) r.proven.push(k.slot);
  }
  await sealMissing(v, plan.seal, key, r);
  if (!mayKill(plan, new Set(r.proven))) {
    return { ...r, stopped: `${v.volume}: a new slot did not open the header; old slots kept` };
  }
  if (plan.kill.length > 0) {
    progress("proving", `proving every kept slot before removing ${slots(plan.kill)}`);
    // A slot added by a rotation cut short before its proof: proven now, before any kill.
    const added = new Set(plan.add.map((k) => k.slot));
    for (const k of encryption.keys) {
      if (added.has(k.slot) || k.slot === unlockedBy || !ENROLLABLE_KINDS.has(k.kind)) continue;
      if (!(await v.crypt.testKey(v.device, await keyBytes(v, k), k.slot))) {
        return {
          ...r,
          stopped: `${v.volume}: slot ${k.slot} does not open the header; old slots kept`,
        };
      }
      r.proven.push(k.slot);
    }
  }
  if (plan.kill.length > 0) progress("removing", `removing slots ${slots(plan.kill)}`);
  for (const s of plan.kill) {
    await v.crypt.killSlot(v.device, s);
    r.killed.push(s);
  }
  return r;
}

/** Seal each of `keys` into its free slot with `authKey`'s authority; into `r`: sealed or why not. */
async function sealMissing(
  v: LuksVolume,
  keys: readonly EncryptionKeyConfig[],
  authKey: Uint8Array,
  r: RotationResult,
): Promise<void> {
  for (const k of keys) {
    const why = await addTpmKey(v, k.slot, authKey);
    if (why === undefined) r.sealed.push(k.slot);
    else r.notes.push(`${describeKey(k)} skipped: ${why}`);
  }
}
