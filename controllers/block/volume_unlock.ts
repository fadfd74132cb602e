/**
 * The operator's way into a `locked` volume: the UnlockVolume RPC hands a
 * passphrase to {@link VolumeUnlocker.unlock}, which tries it against the
 * header the provisioner left locked, keeps the key in memory only (never
 * in a resource, a log line or an error) and wakes the provisioner, which
 * then opens and mounts the volume exactly as if a configured key had
 * opened it. The call resolves once the provisioner has opened the mapping.
 * @module
 */
import type { CryptBackend } from "../../platform/crypt/mod.ts";
import type { VolumeName } from "../../resources/mod.ts";

/** Why an unlock was refused; the API maps each to a gRPC code. */
export type UnlockRefusal =
  | "not-found"
  | "failed-precondition"
  | "permission-denied"
  | "invalid-argument"
  | "unavailable";

/** An unlock refused; the message never holds the passphrase. */
export class VolumeUnlockError extends Error {
  override name = "VolumeUnlockError";
  constructor(readonly code: UnlockRefusal, message: string) {
    super(message);
  }
}

/** A key the operator supplied that opened `slot`; consumed by the provisioner. */
export interface SuppliedKey {
  readonly key: Uint8Array;
  readonly slot: number;
}

/** What an accepted unlock opened. */
export interface UnlockResult {
  readonly volume: VolumeName;
  readonly slot: number;
  readonly mappingPath: string;
}

const VOLUMES: readonly string[] = ["STATE", "EPHEMERAL"];
/** The longest passphrase accepted (cryptsetup reads more, but no operator types more). */
export const MAX_PASSPHRASE_BYTES = 512;

interface Waiter {
  resolve: (r: UnlockResult) => void;
  reject: (e: Error) => void;
}

/** Shared by the provisioner (which reports locked volumes) and the API action. */
export class VolumeUnlocker {
  readonly #crypt: CryptBackend | undefined;
  readonly #timeoutMs: number;
  /** Locked volumes and the device holding their header. */
  readonly #locked = new Map<VolumeName, string>();
  readonly #supplied = new Map<VolumeName, SuppliedKey>();
  readonly #waiters = new Map<VolumeName, Waiter>();
  /** Boot's STATE opener waiting for a key (state_boot_open.ts), by volume. */
  readonly #listeners = new Map<VolumeName, () => void>();
  #wake: () => void = () => {};

  constructor(options: { crypt?: CryptBackend; timeoutMs?: number }) {
    this.#crypt = options.crypt;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  /** The provisioner's wake-up, called after a key was accepted. */
  setWake(wake: () => void): void {
    this.#wake = wake;
  }

  /** The provisioner left `volume` locked: its header on `device` opened with no key. */
  markLocked(volume: VolumeName, device: string): void {
    this.#locked.set(volume, device);
  }

  /** The provisioner opened `volume` at `mappingPath` (by any key). */
  markOpened(volume: VolumeName, slot: number, mappingPath: string): void {
    this.#locked.delete(volume);
    this.#supplied.get(volume)?.key.fill(0);
    this.#supplied.delete(volume);
    this.#waiters.get(volume)?.resolve({ volume, slot, mappingPath });
    this.#waiters.delete(volume);
  }

  /** The provisioner failed to open `volume` with the supplied key. */
  markFailed(volume: VolumeName, reason: string): void {
    this.#supplied.get(volume)?.key.fill(0);
    this.#supplied.delete(volume);
    this.#waiters.get(volume)?.reject(new VolumeUnlockError("unavailable", reason));
    this.#waiters.delete(volume);
  }

  /**
   * Boot opened `volume` with the supplied key before any config (state_boot_open.ts):
   * the caller is answered and the volume is no longer locked, but the key is kept for
   * the provisioner, which opens the volume again once the config has been read.
   */
  markMapped(volume: VolumeName, slot: number, mappingPath: string): void {
    this.#locked.delete(volume);
    this.#waiters.get(volume)?.resolve({ volume, slot, mappingPath });
    this.#waiters.delete(volume);
  }

  /**
   * Resolves with the next key an operator supplies for `volume` (one that
   * opened a slot), or undefined when `signal` aborts. One waiter per volume.
   */
  waitSupplied(volume: VolumeName, signal: AbortSignal): Promise<SuppliedKey | undefined> {
    return new Promise((resolve) => {
      const done = (k: SuppliedKey | undefined) => {
        this.#listeners.delete(volume);
        signal.removeEventListener("abort", aborted);
        resolve(k);
      };
      const aborted = () => done(undefined);
      if (signal.aborted) return resolve(undefined);
      signal.addEventListener("abort", aborted, { once: true });
      this.#listeners.set(volume, () => done(this.#supplied.get(volume)));
    });
  }

  /** The key supplied for `volume`, if any (the provisioner's to use). */
  supplied(volume: VolumeName): SuppliedKey | undefined {
    return this.#supplied.get(volume);
  }

  /**
   * Try `passphrase` on `volume`'s header; when it opens a slot, hand it to
   * the provisioner and resolve once the volume is open.
   * @throws VolumeUnlockError (never naming the passphrase)
   */
  async unlock(volume: string, passphrase: Uint8Array): Promise<UnlockResult> {
    if (!VOLUMES.includes(volume)) {
      throw new VolumeUnlockError("not-found", `no volume "${volume}" (STATE or EPHEMERAL)`);
    }
    const v = volume as VolumeName;
    if (passphrase.length === 0 || passphrase.length > MAX_PASSPHRASE_BYTES) {
      throw new VolumeUnlockError(
        "invalid-argument",
        `the passphrase must be 1 to ${MAX_PASSPHRASE_BYTES} bytes (got ${passphrase.length})`,
      );
    }
    const device = this.#locked.get(v);
    if (!device || !this.#crypt) {
      throw new VolumeUnlockError("failed-precondition", `${v} is not locked`);
    }
    if (this.#waiters.has(v)) {
      throw new VolumeUnlockError("failed-precondition", `${v} is being unlocked already`);
    }
    const slot = await this.#slotOpenedBy(device, passphrase);
    if (slot === undefined) {
      throw new VolumeUnlockError("permission-denied", `the passphrase opens no keyslot of ${v}`);
    }
    this.#supplied.set(v, { key: passphrase.slice(), slot });
    const opened = new Promise<UnlockResult>((resolve, reject) => {
      this.#waiters.set(v, { resolve, reject });
    });
    this.#wake();
    this.#listeners.get(v)?.();
    return await withTimeout(opened, this.#timeoutMs, () => {
      this.markFailed(v, `${v}: the provisioner did not open it within ${this.#timeoutMs} ms`);
    });
  }

  async #slotOpenedBy(device: string, key: Uint8Array): Promise<number | undefined> {
    const crypt = this.#crypt!;
    const info = await crypt.dump(device).catch((e) => {
      throw new VolumeUnlockError("unavailable", `read the LUKS2 header: ${(e as Error).message}`);
    });
    for (const s of info.slots) {
      if (await crypt.testKey(device, key, s.slot).catch(() => false)) return s.slot;
    }
    return undefined;
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new VolumeUnlockError("unavailable", `unlock not finished within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}
