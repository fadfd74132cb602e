/**
 * Opens an encrypted STATE at boot, before any config, for the late config
 * sources to read its `config.yaml` (config/keeper/late_config.ts): by the
 * header's `machined-tpm` and `machined-nodeid` tokens alone (the TPM
 * unseals the first, the board's UUID derives the second;
 * {@link decideStateBoot}), or, when
 * none opens, by a passphrase an operator supplies through UnlockVolume while
 * the node sits in maintenance with the condition `locked`. Nothing here
 * writes to the partition: a header no key opens is left byte for byte.
 * @module
 */
import type { EventBus } from "../../events/mod.ts";
import type { BlockBackend } from "../../platform/block/mod.ts";
import { type CryptBackend, nodeIdKey } from "../../platform/crypt/mod.ts";
import type { KeySource } from "./luks_volume.ts";
import { unsealTpmKey } from "./tpm_keys.ts";
import { describeKey } from "./decide_encryption.ts";
import {
  concludeStateBoot,
  decideStateBoot,
  STATE_LOCKED_CONDITION,
  type StateBootAttempt,
  type TokenOnlyKind,
} from "./state_boot.ts";
import { mappingName } from "./volume_encryption.ts";
import type { VolumeUnlocker } from "./volume_unlock.ts";

/** STATE opened for reading: the mapping and its filesystem; `close` when read. */
export interface OpenedState {
  devicePath: string;
  filesystem: string;
  /** How it was opened (`slot 0 (nodeid)`, `slot 1 (passphrase)`). */
  by: string;
  close(): Promise<void>;
}

/** What {@link StateBootOpener} needs. */
export interface StateBootDeps {
  crypt: CryptBackend;
  block: BlockBackend;
  keys: KeySource;
  unlocker: VolumeUnlocker;
  /** Raises (a reason) or clears (undefined) a MachineStatus condition by name. */
  condition: (name: string, reason: string | undefined) => void;
  events?: EventBus;
}

const VOLUME = "STATE";

/** One per boot; config/keeper/late_config.ts calls {@link open} for a STATE holding LUKS2. */
export class StateBootOpener {
  readonly #d: StateBootDeps;

  constructor(deps: StateBootDeps) {
    this.#d = deps;
  }

  /**
   * Open STATE on `device` by its header's tokens; when none opens, say
   * `locked`, call `onLocked` and wait for a passphrase through UnlockVolume.
   * Resolves undefined when `signal` aborts (a config arrived another way).
   * @throws when the header cannot be read or the mapping not made
   */
  async open(
    device: string,
    signal: AbortSignal,
    onLocked: () => void,
  ): Promise<OpenedState | undefined> {
    const { crypt, unlocker, condition, events } = this.#d;
    const slots = (await crypt.dump(device)).slots;
    const decision = decideStateBoot(slots);
    const attempts: StateBootAttempt[] = [];
    for (const { slot, kind } of decision.action === "unlock" ? decision.slots : []) {
      const key = await this.#tokenKey(device, slot, kind).catch((e) => {
        attempts.push({ slot, kind, opened: false, error: (e as Error).message });
        return undefined;
      });
      if (!key) continue;
      if (await crypt.testKey(device, key, slot)) {
        const opened = await this.#map(device, key, `slot ${slot} (${kind})`);
        const tried = attempts.map((a) =>
          `; tried first ${describeKey(a)}: ${a.error ?? "did not open"}`
        );
        const why = `${VOLUME} opened by ${opened.by} before the config${tried.join("")}`;
        events?.emit("task", `volume ${VOLUME}`, "unlocked", why);
        return opened;
      }
      attempts.push({ slot, kind, opened: false });
    }
    const outcome = concludeStateBoot(slots, attempts);
    const reason = outcome.state === "locked" ? outcome.reason : decision.reason;
    condition(STATE_LOCKED_CONDITION, reason);
    events?.emit("task", `volume ${VOLUME}`, "locked", reason);
    unlocker.markLocked(VOLUME, device);
    onLocked();
    try {
      return await this.#waitForPassphrase(device, signal);
    } finally {
      condition(STATE_LOCKED_CONDITION, undefined);
    }
  }

  async #waitForPassphrase(device: string, signal: AbortSignal): Promise<OpenedState | undefined> {
    const { unlocker, events } = this.#d;
    for (;;) {
      const supplied = await unlocker.waitSupplied(VOLUME, signal);
      if (!supplied) return undefined;
      try {
        const opened = await this.#map(device, supplied.key, `slot ${supplied.slot} (passphrase)`);
        unlocker.markMapped(VOLUME, supplied.slot, opened.devicePath);
        events?.emit("task", `volume ${VOLUME}`, "unlocked", `${VOLUME} opened by ${opened.by}`);
        return opened;
      } catch (e) {
        unlocker.markFailed(VOLUME, `${VOLUME}: ${(e as Error).message}`);
        unlocker.markLocked(VOLUME, device);
      }
    }
  }

  /** The key of a token-only slot: unsealed by the TPM, or derived from the board's UUID. */
  async #tokenKey(device: string, slot: number, kind: TokenOnlyKind): Promise<Uint8Array> {
    const { crypt, keys } = this.#d;
    if (kind === "tpm") return await unsealTpmKey({ crypt, keys, volume: VOLUME, device }, slot);
    return await nodeIdKey(await keys.smbiosUuid(), VOLUME);
  }

  async #map(device: string, key: Uint8Array, by: string): Promise<OpenedState> {
    const { crypt, block } = this.#d;
    const name = mappingName(VOLUME);
    const mapped = await crypt.open(device, name, key);
    const fs = await block.probe(mapped, 0).catch(() => undefined);
    return {
      devicePath: mapped,
      filesystem: fs?.type ?? "ext4",
      by,
      close: () => crypt.close(name),
    };
  }
}
