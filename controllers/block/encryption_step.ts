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
import { type EncryptionOutcome, encryptVolume } from "./volume_encryption.ts";

/** What {@link EncryptionStep} needs. */
export interface EncryptionStepOptions {
  crypt?: CryptBackend;
  /** @default the board's SMBIOS UUID */
  keys?: KeySource;
  block: BlockBackend;
  process: ProcessBackend;
  zeroBytes: number;
  events?: EventBus;
}

type Opened = Extract<EncryptionOutcome, { kind: "open" }>;

/** One per provisioner. */
export class EncryptionStep {
  readonly #o: EncryptionStepOptions;
  /** Encrypted volumes this process opened, by partition GUID. */
  readonly #opened = new Map<string, Opened>();
  readonly #lastEvent = new Map<VolumeName, string>();

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
    const o = await this.#run(spec, p, encryption, mayFormat);
    this.#announce(spec.volume, o);
    return o;
  }

  async #run(
    spec: VolumeSpecSpec,
    p: PartitionFacts,
    encryption: VolumeEncryptionConfig | undefined,
    mayFormat: boolean,
  ): Promise<EncryptionOutcome> {
    const { crypt, keys, block, process, zeroBytes } = this.#o;
    const opened = this.#opened.get(p.uuid);
    // Opened by this process and still a header: not unlocked again (argon2id per key tried).
    if (opened && p.fs?.type === "crypto_LUKS") return { ...opened, formatted: false };
    if (!crypt) {
      const reason = `${spec.volume} holds a LUKS2 header but this node has no LUKS2 backend`;
      return { kind: "refused", code: "no-crypt-backend", reason, encrypted: true };
    }
    const smbios = keys ?? { smbiosUuid: () => readSmbiosUuid() };
    const o = await encryptVolume(
      { crypt, keys: smbios, block, process, zeroBytes },
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
    if (key === this.#lastEvent.get(volume)) return;
    this.#lastEvent.set(volume, key);
    this.#o.events?.emit("task", `volume ${volume}`, action, o.reason);
  }
}
