/**
 * The encryption step of provisioning, for one volume whose partition
 * exists: classify what the partition holds, follow
 * {@link decideEncryption}, and carry the decision out: format a blank
 * partition as LUKS2 with every enrollable key (and seal its `tpm` slots
 * when a TPM takes them), open the mapping
 * (/dev/mapper/<volume>) and make the filesystem there; or unlock an
 * existing header with the configured keys and open it; or refuse, or end
 * `locked`, writing nothing. A plain volume (no `encryption`) is handed
 * back to the caller untouched. Keys never leave this module and
 * luks_volume.ts: outcomes carry the slot and kind only.
 * @module
 */
import type { EncryptionKeyConfig, VolumeEncryptionConfig } from "../../config/mod.ts";
import type { BlockBackend, FsInfo } from "../../platform/block/mod.ts";
import type { CryptBackend, LuksSlot } from "../../platform/crypt/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type { VolumeSpecSpec, VolumeUnlock } from "../../resources/mod.ts";
import { decideEncryption, type VolumeContent } from "./decide_encryption.ts";
import type { PartitionFacts } from "./disk_facts.ts";
import { isZero } from "./disk_facts.ts";
import {
  formatVolume,
  keyBytes,
  type KeySource,
  type LuksVolume,
  unlockVolume,
} from "./luks_volume.ts";
import { makeFilesystem } from "./mkfs.ts";
import { ProvisionError } from "./provision_error.ts";

/** What the step needs. */
export interface EncryptionStepDeps {
  crypt: CryptBackend;
  keys: KeySource;
  block: BlockBackend;
  process: ProcessBackend;
  /** How many leading bytes of a new mapping are zeroed (and must be zero to format a found one). */
  zeroBytes: number;
}

/** The outcome for one volume. */
export type EncryptionOutcome =
  /** No `encryption` and no LUKS2 header: provisioning's plain path. */
  | { kind: "plain" }
  | {
    kind: "open";
    mappingPath: string;
    unlockedBy: VolumeUnlock;
    /** The filesystem on the mapping; undefined when it holds something else. */
    fs?: FsInfo;
    /** This pass wrote (LUKS2 format and/or mkfs on the mapping). */
    formatted: boolean;
    reason: string;
    /** The header's active slots and their token kinds, as last read or written. */
    slots: readonly LuksSlot[];
    /** The slots a key opened or proved with `--test-passphrase` in this boot. */
    proven: readonly number[];
    /**
     * Configured keys skipped or tried in vain on the way (a `tpm` slot with
     * no TPM, a TPM that refused before the static key opened), with why.
     */
    notes: readonly string[];
  }
  | { kind: "refused"; code: string; reason: string; encrypted: boolean }
  | { kind: "locked"; reason: string; slots: readonly LuksSlot[] };

/** The dm-crypt mapping name of a volume: its name, so `/dev/mapper/STATE`. */
export function mappingName(volume: string): string {
  return volume;
}

/** What a partition holds, for {@link decideEncryption}. `mayFormat` reads as blank. */
export async function volumeContent(
  crypt: CryptBackend,
  p: PartitionFacts,
  mayFormat: boolean,
): Promise<VolumeContent> {
  if (p.fs?.type === "crypto_LUKS") {
    return { kind: "luks", slots: (await crypt.dump(p.path)).slots };
  }
  if (mayFormat) return { kind: "blank" };
  if (p.fs) return { kind: "filesystem", type: p.fs.type };
  return p.blank ? { kind: "blank" } : { kind: "unrecognized" };
}

/**
 * Run the step for `spec` on partition `p`. `encryption` is the config's
 * (with key material); `mayFormat` is provisioning's consent for `p`.
 * @throws ProvisionError when a backend step fails (not for a refusal or a lock).
 */
export async function encryptVolume(
  deps: EncryptionStepDeps,
  spec: VolumeSpecSpec,
  p: PartitionFacts,
  encryption: VolumeEncryptionConfig | undefined,
  mayFormat: boolean,
): Promise<EncryptionOutcome> {
  const content = await volumeContent(deps.crypt, p, mayFormat).catch((e) => {
    throw new ProvisionError("read the LUKS2 header of", p.path, { cause: e });
  });
  const decision = decideEncryption(spec.volume, content, encryption, mayFormat);
  const lv: LuksVolume = {
    crypt: deps.crypt,
    keys: deps.keys,
    volume: spec.volume,
    device: p.path,
  };
  const discards = { allowDiscards: encryption?.allow_discards ?? false };
  switch (decision.action) {
    case "plain":
      return { kind: "plain" };
    case "refuse":
      if (decision.code === "locked") {
        const slots = content.kind === "luks" ? content.slots : [];
        return { kind: "locked", reason: decision.reason, slots };
      }
      return {
        kind: "refused",
        code: decision.code,
        reason: decision.reason,
        encrypted: content.kind === "luks",
      };
    case "format": {
      const made = await formatVolume(lv, encryption!, decision.keys, decision.tpm).catch((e) => {
        throw new ProvisionError("format LUKS2 on", p.path, { cause: e });
      });
      const [first] = decision.keys;
      const mapped = await openMapping(deps, lv, await keyBytes(lv, first), discards);
      // Zero the head first: a mkfs cut short then leaves a mapping that reads blank.
      await deps.block.write(mapped, 0, new Uint8Array(deps.zeroBytes)).catch((e) => {
        throw new ProvisionError("zero the head of", mapped, { cause: e });
      });
      const fs = await mkfsOn(deps, spec, mapped);
      const unlockedBy = { slot: first.slot, kind: first.kind };
      return {
        kind: "open",
        mappingPath: mapped,
        unlockedBy,
        fs,
        formatted: true,
        reason: withNotes(decision.reason, made.notes),
        slots: [
          ...decision.keys.map((k) => ({ slot: k.slot, kind: k.kind })),
          ...made.sealed.map((slot) => ({ slot, kind: "tpm" })),
        ].sort((a, b) => a.slot - b.slot),
        proven: [first.slot],
        notes: made.notes,
      };
    }
    case "unlock": {
      const slots = content.kind === "luks" ? content.slots : [];
      return await unlockAndOpen(deps, spec, lv, decision.candidates, discards, slots);
    }
  }
}

/** Try the candidates; open the mapping with the first that opens the header, or end locked. */
async function unlockAndOpen(
  deps: EncryptionStepDeps,
  spec: VolumeSpecSpec,
  lv: LuksVolume,
  candidates: EncryptionKeyConfig[],
  discards: { allowDiscards: boolean },
  slots: readonly LuksSlot[],
): Promise<EncryptionOutcome> {
  const { outcome, key, notes } = await unlockVolume(lv, candidates);
  if (outcome.state === "locked" || !key) {
    return { kind: "locked", reason: outcome.state === "locked" ? outcome.reason : "", slots };
  }
  const unlockedBy = { slot: outcome.slot, kind: outcome.kind };
  const header = { slots, proven: [outcome.slot], notes };
  const reason = withNotes(outcome.reason, notes.map((n) => `tried first ${n}`));
  return await openUnlocked(deps, spec, lv, key, unlockedBy, reason, discards, header);
}

/** `reason; note; note`. Pure. */
function withNotes(reason: string, notes: readonly string[]): string {
  return [reason, ...notes].join("; ");
}

/**
 * Open a volume whose header `key` opened (a configured key, or a passphrase
 * the operator supplied through UnlockVolume), then find or make its filesystem.
 * `header` is what the header held and which of its slots were proven.
 * @throws ProvisionError when a backend step fails
 */
export async function openUnlocked(
  deps: EncryptionStepDeps,
  spec: VolumeSpecSpec,
  lv: LuksVolume,
  key: Uint8Array,
  unlockedBy: VolumeUnlock,
  reason: string,
  discards: { allowDiscards: boolean },
  header: { slots: readonly LuksSlot[]; proven: readonly number[]; notes?: readonly string[] },
): Promise<EncryptionOutcome> {
  const mapped = await openMapping(deps, lv, key, discards);
  const opened = {
    kind: "open" as const,
    mappingPath: mapped,
    unlockedBy,
    formatted: false,
    reason,
    ...header,
    notes: header.notes ?? [],
  };
  const fs = await probe(deps, mapped);
  if (fs) return { ...opened, fs };
  // Ours, opened by our key, and zero at its head: a format cut short before mkfs.
  if (!isZero(await deps.block.read(mapped, 0, deps.zeroBytes))) {
    return { ...opened, reason: `${spec.volume} opened, but holds data that is not a filesystem` };
  }
  return { ...opened, fs: await mkfsOn(deps, spec, mapped), formatted: true };
}

async function openMapping(
  deps: EncryptionStepDeps,
  lv: LuksVolume,
  key: Uint8Array,
  options: { allowDiscards: boolean },
): Promise<string> {
  return await deps.crypt.open(lv.device, mappingName(lv.volume), key, options).catch((e) => {
    throw new ProvisionError("open the LUKS2 volume", lv.device, { cause: e });
  });
}

async function mkfsOn(
  deps: EncryptionStepDeps,
  spec: VolumeSpecSpec,
  mapped: string,
): Promise<FsInfo | undefined> {
  await makeFilesystem(deps.process, spec.filesystem, mapped, spec.partitionName).catch((e) => {
    throw new ProvisionError("format", mapped, { cause: e });
  });
  return await probe(deps, mapped);
}

async function probe(deps: EncryptionStepDeps, mapped: string): Promise<FsInfo | undefined> {
  return await deps.block.probe(mapped, 0).catch((e) => {
    throw new ProvisionError("probe", mapped, { cause: e });
  });
}
