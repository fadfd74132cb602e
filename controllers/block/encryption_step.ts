/**
 * The provisioner's memory of its encrypted volumes across reconciles: runs
 * {@link encryptVolume} for a volume, remembers a volume it opened (so a
 * resync does not pay argon2id for every key again) and emits one event per
 * change of outcome (encrypted, unlocked, locked, refused).
 * @module
 */
import type { VolumeEncryptionConfig } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import type { BlockBackend } from "../../platform/block/mod.ts";
import { type CryptBackend, readSmbiosUuid } from "../../platform/crypt/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type { VolumeName, VolumeSpecSpec } from "../../resources/mod.ts";
import type { PartitionFacts } from "./disk_facts.ts";
import type { KeySource } from "./luks_volume.ts";
import { type EncryptionOutcome, encryptVolume, openUnlocked } from "./volume_encryption.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";
import { rotateToConfig } from "./rotation_step.ts";

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

/** One per provisioner. */
export class EncryptionStep {
  readonly #o: EncryptionStepOptions;
  /** Encrypted volumes this process opened, by partition GUID. */
  readonly #opened = new Map<string, Opened>();
  readonly #lastEvent = new Map<VolumeName, string>();
  /** The configured slots and kinds each open volume was last rotated to, by partition GUID. */
  readonly #rotated = new Map<string, string>();

  constructor(options: EncryptionStepOptions) {
    this.#o = options;
  }

  /** The outcome for `spec` on `p`; see {@link encryptVolume}. */
  async run(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig | undefined,
    mayFormat: boolean,
  ): Promise<EncryptionOutcome> {
    let o = await this.#run(spec, p, encryption, mayFormat);
    if (o.kind === "locked") o = await this.#supplied(spec, p, encryption, o);
    if (o.kind === "open") {
      this.#o.unlocker?.markOpened(spec.volume, o.unlockedBy.slot, o.mappingPath);
    }
    this.#announce(spec.volume, o);
    if (o.kind === "open" && o.fs && encryption) await this.#rotate(spec, p, encryption);
    return o;
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
  ): Promise<void> {
    const { crypt, events } = this.#o;
    const signature = encryption.keys.map((k) => `${k.slot}:${k.kind}`).join(",");
    if (!crypt || this.#rotated.get(p.uuid) === signature) return;
    const lv = { crypt, keys: this.#keys(), volume: spec.volume, device: p.path };
    const subject = `volume ${spec.volume}`;
    let r;
    try {
      r = await rotateToConfig(lv, encryption);
    } catch (e) {
      const why = `${spec.volume}: rotation cut short (${(e as Error).message}); resumes next pass`;
      events?.emit("task", subject, "rotation-stopped", why);
      return;
    }
    this.#rotated.set(p.uuid, signature);
    if (r.kind === "none") return;
    events?.emit(
      "task",
      subject,
      r.kind === "rotated" ? "rotated" : `rotation-${r.kind}`,
      r.reason,
    );
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
    try {
      const o = await openUnlocked(this.#deps(), spec, lv, supplied.key, by, reason, discards);
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
