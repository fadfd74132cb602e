/**
 * The provisioner's memory of its encrypted volumes across reconciles: runs
 * {@link encryptVolume} for a volume, remembers a volume it opened (so a
 * resync does not pay argon2id for every key again), keeps each header's
 * slots with the ones proven in this boot and the rotation's phase (for
 * VolumeStatus), and emits one event per change of outcome (encrypted,
 * unlocked, locked, refused).
 * @module
 */
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import type { BlockBackend } from "../../platform/block/mod.ts";
import { type CryptBackend, readSmbiosUuid } from "../../platform/crypt/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type {
  VolumeKeySlot,
  VolumeName,
  VolumeRotation,
  VolumeSpecSpec,
} from "../../resources/mod.ts";
import type { PartitionFacts } from "./disk_facts.ts";
import type { KeySource, RotationProgress } from "./luks_volume.ts";
import { type EncryptionOutcome, encryptVolume, openUnlocked } from "./volume_encryption.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";
import { rotateToConfig } from "./rotation_step.ts";
import { describeKey } from "./decide_encryption.ts";

/** What {@link EncryptionStep} needs. */
export interface EncryptionStepOptions {
  crypt?: CryptBackend;
  /** @default the board's SMBIOS UUID */
  keys?: KeySource;
  block: BlockBackend;
  process: ProcessBackend;
  zeroBytes: number;
  events?: EventBus;
  /** Passphrases supplied through UnlockVolume for volumes left `locked`. */
  unlocker?: VolumeUnlocker;
}

type Opened = Extract<EncryptionOutcome, { kind: "open" }>;

/** What VolumeStatus shows of an encrypted volume's keys. */
export interface KeyReport {
  keySlots: VolumeKeySlot[];
  rotation: VolumeRotation | null;
}

/** The header's slots with the ones proven in this boot. Pure. */
export function keySlots(
  slots: readonly { slot: number; kind?: string }[],
  proven: ReadonlySet<number>,
): VolumeKeySlot[] {
  return slots.map((s) => ({ slot: s.slot, kind: s.kind ?? "", proven: proven.has(s.slot) }));
}

/**
 * The key notes after a rotation pass: the earlier notes (format's skips,
 * unlock's refusals), less those about the `tpm` slots the pass looked at
 * (`tpmMissing`: it sealed them, or `fresh` says why not), then `fresh`. Pure.
 */
export function mergeKeyNotes(
  earlier: readonly string[],
  tpmMissing: readonly number[],
  fresh: readonly string[],
): string[] {
  const about = tpmMissing.map((slot) => `${describeKey({ slot, kind: "tpm" })} `);
  const kept = earlier.filter((n) => !about.some((a) => n.startsWith(a)));
  return [...kept, ...fresh.filter((n) => !kept.includes(n))];
}

/** One per provisioner. */
export class EncryptionStep {
  readonly #o: EncryptionStepOptions;
  /** Encrypted volumes this process opened, by partition GUID. */
  readonly #opened = new Map<string, Opened>();
  readonly #lastEvent = new Map<VolumeName, string>();
  /** The configured slots and kinds each open volume was last rotated to, by partition GUID. */
  readonly #rotated = new Map<string, string>();
  /** Slots proven (opened or tested) in this process, by partition GUID. */
  readonly #proven = new Map<string, Set<number>>();
  /** A rotation stopped or refused, by partition GUID (cleared when one finishes). */
  readonly #rotation = new Map<string, VolumeRotation>();

  constructor(options: EncryptionStepOptions) {
    this.#o = options;
  }

  /**
   * The outcome for `spec` on `p` (see {@link encryptVolume}) and what
   * VolumeStatus shows of its keys; `progress` hears a rotation's phases.
   */
  async run(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig | undefined,
    mayFormat: boolean,
    progress?: (rotation: VolumeRotation) => Promise<void>,
  ): Promise<{ outcome: EncryptionOutcome; keys: KeyReport }> {
    let o = await this.#run(spec, p, encryption, mayFormat);
    if (o.kind === "locked") o = await this.#supplied(spec, p, encryption, o);
    if (o.kind === "open") {
      this.#o.unlocker?.markOpened(spec.volume, o.unlockedBy.slot, o.mappingPath);
      this.#prove(p.uuid, o.proven);
    }
    this.#announce(spec.volume, o);
    if (o.kind === "open" && o.fs && encryption) {
      o = await this.#rotate(spec, p, encryption, o, progress);
    }
    return { outcome: o, keys: this.#report(p.uuid, o) };
  }

  #prove(guid: string, slots: readonly number[]): void {
    const set = this.#proven.get(guid) ?? new Set<number>();
    for (const s of slots) set.add(s);
    this.#proven.set(guid, set);
  }

  #report(guid: string, o: EncryptionOutcome): KeyReport {
    const slots = o.kind === "open" || o.kind === "locked" ? o.slots : [];
    return {
      keySlots: keySlots(slots, this.#proven.get(guid) ?? new Set()),
      rotation: this.#rotation.get(guid) ?? null,
    };
  }

  /**
   * Rotate an open volume to its configured keys once per change of them (and
   * once per process, which resumes a rotation cut short in an earlier boot).
   * A rotation that threw is tried again at the next reconcile.
   */
  async #rotate(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig,
    o: Opened,
    progress?: (rotation: VolumeRotation) => Promise<void>,
  ): Promise<Opened> {
    const { crypt, events } = this.#o;
    const signature = encryption.keys.map((k) => `${k.slot}:${k.kind}`).join(",");
    if (!crypt || this.#rotated.get(p.uuid) === signature) return o;
    const lv = { crypt, keys: this.#keys(), volume: spec.volume, device: p.path };
    const subject = `volume ${spec.volume}`;
    // Published as each phase starts; the reconcile waits for none of them.
    const onPhase: RotationProgress = (phase, message) => {
      void progress?.({ phase, message: `${spec.volume}: ${message}` }).catch(() => {});
    };
    let r;
    try {
      r = await rotateToConfig(lv, encryption, onPhase);
    } catch (e) {
      const why = `${spec.volume}: rotation cut short (${(e as Error).message}); resumes next pass`;
      this.#rotation.set(p.uuid, { phase: "stopped", message: why });
      events?.emit("task", subject, "rotation-stopped", why);
      return o;
    }
    this.#rotated.set(p.uuid, signature);
    this.#prove(p.uuid, r.proven);
    const notes = mergeKeyNotes(o.notes, r.tpmMissing, r.notes);
    const updated = { ...o, slots: r.slots, notes };
    if (this.#opened.has(p.uuid)) this.#opened.set(p.uuid, updated);
    if (r.kind === "stopped" || r.kind === "refused") {
      this.#rotation.set(p.uuid, { phase: r.kind, message: r.reason });
    } else this.#rotation.delete(p.uuid);
    if (r.kind === "none") return updated;
    const action = r.kind === "skipped"
      ? "tpm-skipped"
      : r.kind === "rotated"
      ? "rotated"
      : `rotation-${r.kind}`;
    events?.emit("task", subject, action, r.reason);
    return updated;
  }

  /** A locked volume: open it with the operator's passphrase, or report it locked. */
  async #supplied(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig | undefined,
    locked: EncryptionOutcome,
  ): Promise<EncryptionOutcome> {
    const { crypt, unlocker } = this.#o;
    const supplied = unlocker?.supplied(spec.volume);
    if (!crypt || !unlocker) return locked;
    if (!supplied) {
      unlocker.markLocked(spec.volume, p.path);
      return locked;
    }
    const lv = { crypt, keys: this.#keys(), volume: spec.volume, device: p.path };
    const by = { slot: supplied.slot, kind: "passphrase" };
    const reason = `${spec.volume} unlocked by a passphrase supplied through UnlockVolume ` +
      `(slot ${supplied.slot})`;
    const discards = { allowDiscards: encryption?.allow_discards ?? false };
    const slots = locked.kind === "locked" ? locked.slots : [];
    const header = { slots, proven: [supplied.slot] };
    try {
      const o = await openUnlocked(
        this.#deps(),
        spec,
        lv,
        supplied.key,
        by,
        reason,
        discards,
        header,
      );
      if (o.kind === "open" && o.fs) this.#opened.set(p.uuid, o);
      return o;
    } catch (e) {
      unlocker.markFailed(spec.volume, (e as Error).message);
      throw e;
    }
  }

  #keys(): KeySource {
    return this.#o.keys ?? { smbiosUuid: () => readSmbiosUuid() };
  }

  #deps() {
    const { crypt, block, process, zeroBytes } = this.#o;
    return { crypt: crypt!, keys: this.#keys(), block, process, zeroBytes };
  }

  async #run(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig | undefined,
    mayFormat: boolean,
  ): Promise<EncryptionOutcome> {
    const { crypt, block, process, zeroBytes } = this.#o;
    const opened = this.#opened.get(p.uuid);
    // Opened by this process and still a header: not unlocked again (argon2id per key tried).
    if (opened && p.fs?.type === "crypto_LUKS") return { ...opened, formatted: false };
    if (!crypt) {
      const reason = `${spec.volume} holds a LUKS2 header but this node has no LUKS2 backend`;
      return { kind: "refused", code: "no-crypt-backend", reason, encrypted: true };
    }
    const o = await encryptVolume(
      { crypt, keys: this.#keys(), block, process, zeroBytes },
      spec,
      p,
      encryption,
      mayFormat,
    );
    if (o.kind === "open" && o.fs) this.#opened.set(p.uuid, o);
    return o;
  }

  /** An event for each encryption, unlock, lock or refusal of a volume, when it changes. */
  #announce(volume: VolumeName, o: EncryptionOutcome): void {
    if (o.kind === "plain") return;
    const action = o.kind === "open" ? (o.formatted ? "encrypted" : "unlocked") : o.kind;
    const key = `${action}:${o.reason}`;
    const last = this.#lastEvent.get(volume);
    if (key === last) return;
    // Opening again what this process just encrypted (a reconcile before mkfs recorded the
    // mapping) is not news: one `encrypted`, not `encrypted` then `unlocked` (a CI flake).
    if (action === "unlocked" && last?.startsWith("encrypted:")) return;
    this.#lastEvent.set(volume, key);
    this.#o.events?.emit("task", `volume ${volume}`, action, o.reason);
  }
}
