/**
 * The crypt backend: LUKS2 headers and dm-crypt mappings. The real one runs
 * Debian's `cryptsetup`; the fake keeps headers in memory. Keys are bytes
 * handed to the backend, never put in argv or the environment. The unlock
 * metadata (which slot holds which key kind) lives in the LUKS2 header as
 * tokens, so a volume can be unlocked before any file on it is read.
 * @module
 */

/** A keyslot's key derivation: what one unlock by it costs in memory and time. */
export type Pbkdf = Argon2idCost | Pbkdf2Cost;

/** argon2id, memory-hard: for keys a person chose (docs/decisions.md, "LUKS2 key derivation cost"). */
export interface Argon2idCost {
  algorithm?: "argon2id";
  /** KiB. */
  memoryKiB: number;
  iterations: number;
  parallel: number;
}

/** PBKDF2-SHA256: for keys with the entropy of a random key, which a slow KDF does not protect. */
export interface Pbkdf2Cost {
  algorithm: "pbkdf2";
  iterations: number;
}

/**
 * The cost machined formats with: 64 MiB, 4 passes, 1 lane. It unlocks in
 * about 0.4 s on the development host and stays affordable on a 1 GiB TCG
 * guest (docs/decisions.md, "LUKS2 key derivation cost").
 */
export const DEFAULT_PBKDF: Pbkdf = { memoryKiB: 65536, iterations: 4, parallel: 1 };

/**
 * The cost of a slot whose key the machine made (a TPM-sealed random key, a
 * `nodeid` key): PBKDF2 at cryptsetup's least, 1 000 iterations. A slow KDF
 * only slows the guessing of a key with little entropy; these have a random
 * key's, and argon2id took seconds per derivation in a 1 GiB TCG guest
 * (docs/decisions.md, "Machine-made keys derive with PBKDF2").
 */
export const MACHINE_KEY_PBKDF: Pbkdf = { algorithm: "pbkdf2", iterations: 1000 };

/** Token type prefix: a token `machined-<kind>` says which key kind a slot holds. */
export const TOKEN_PREFIX = "machined-";

/** A LUKS2 token: JSON in the header, bound to keyslots. */
export interface LuksToken {
  /** `machined-static`, `machined-nodeid`, ... */
  type: string;
  keyslots: number[];
  /** Further fields kept as they are (never key material). */
  [field: string]: unknown;
}

/** An active keyslot and the key kind its token names (none without a token). */
export interface LuksSlot {
  slot: number;
  kind?: string;
}

/** What `luksDump --dump-json-metadata` says, reduced to what machined decides on. */
export interface LuksInfo {
  /** Active keyslots, by number. */
  slots: LuksSlot[];
  /** Tokens by id. */
  tokens: Map<number, LuksToken>;
  cipher: string;
  sectorSize: number;
  /** Where the encrypted data starts: everything before it is header. */
  dataOffset: number;
}

/** How to format a new LUKS2 volume. */
export interface FormatOptions {
  /** The first key's slot. */
  slot: number;
  /** @default "aes-xts-plain64" */
  cipher?: string;
  /** @default 4096 */
  sectorSize?: number;
  /** The first key's derivation. @default DEFAULT_PBKDF */
  pbkdf?: Pbkdf;
  /** LUKS2 label (the volume name). */
  label?: string;
}

/** A key did not open the header; carries the device and slot, never the key. */
export class KeyRejectedError extends Error {
  override name = "KeyRejectedError";
  constructor(readonly device: string, readonly slot: number | undefined) {
    super(
      `No key slot of "${device}" opens with the given key${
        slot === undefined ? "" : ` (tried slot ${slot})`
      }`,
    );
  }
}

/** The device holds no LUKS2 header. */
export class NotLuksError extends Error {
  override name = "NotLuksError";
  constructor(readonly device: string) {
    super(`"${device}" holds no LUKS2 header`);
  }
}

/**
 * LUKS2 operations on a block device.
 *
 * Idempotence: `close` of a mapping that is gone succeeds; `open` of a name
 * already mapped to the same device succeeds; `erase` of a device without a
 * header succeeds. `format`, `addKey` and `importToken` are not idempotent.
 */
export interface CryptBackend {
  /** True when the device starts with a LUKS2 header. */
  isLuks(device: string): Promise<boolean>;
  /** @throws NotLuksError */
  dump(device: string): Promise<LuksInfo>;
  /** Write a new header with `key` in `options.slot`. Destroys what the device held. */
  format(device: string, key: Uint8Array, options: FormatOptions): Promise<void>;
  /** Does `key` open the header (in `slot`, when given)? Maps nothing. */
  testKey(device: string, key: Uint8Array, slot?: number): Promise<boolean>;
  /**
   * Map the decrypted device as /dev/mapper/`name`; returns that path.
   * @throws KeyRejectedError when the key opens no slot.
   */
  open(
    device: string,
    name: string,
    key: Uint8Array,
    options?: { allowDiscards?: boolean },
  ): Promise<string>;
  close(name: string): Promise<void>;
  /** Enroll `newKey` in `slot`, authorised by `key`. @throws KeyRejectedError */
  addKey(
    device: string,
    key: Uint8Array,
    newKey: Uint8Array,
    slot: number,
    pbkdf?: Pbkdf,
  ): Promise<void>;
  /** Remove the key in `slot`. */
  killSlot(device: string, slot: number): Promise<void>;
  /** Store `token` in the header under `id`. */
  importToken(device: string, id: number, token: LuksToken): Promise<void>;
  /** @throws NotLuksError; RangeError when no token has `id`. */
  exportToken(device: string, id: number): Promise<LuksToken>;
  /**
   * Crypto-erase: destroy every keyslot, then zero the whole header area, so
   * no key opens the data even if a later wipe is cut short.
   */
  erase(device: string): Promise<void>;
}
