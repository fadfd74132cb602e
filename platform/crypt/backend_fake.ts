/**
 * FakeCryptBackend: LUKS2 headers and mappings in memory, with a
 * FaultInjector (ops: the method names, e.g. `open`, `addKey`, `erase`).
 * Keys are compared as bytes; the key derivation cost is not simulated.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import {
  type CryptBackend,
  DEFAULT_PBKDF,
  type FormatOptions,
  KeyRejectedError,
  type LuksInfo,
  type LuksToken,
  NotLuksError,
  type Pbkdf,
} from "./backend.ts";

/** The LUKS2 default header size: where data starts. */
const DATA_OFFSET = 16 * 1024 * 1024;

interface FakeHeader {
  keys: Map<number, string>;
  /** Each slot's key derivation, as the real header records it. */
  kdf: Map<number, Pbkdf>;
  tokens: Map<number, LuksToken>;
  cipher: string;
  sectorSize: number;
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** The in-memory crypt backend. */
export class FakeCryptBackend implements CryptBackend {
  readonly faults = new FaultInjector();
  readonly headers = new Map<string, FakeHeader>();
  /** Open mappings: name → device. */
  readonly mapped = new Map<string, string>();

  #header(op: string, device: string): FakeHeader {
    const h = this.headers.get(device);
    if (!h) throw new NotLuksError(device);
    void op;
    return h;
  }
  #opens(h: FakeHeader, key: Uint8Array, slot?: number): number | undefined {
    const k = hex(key);
    for (const [s, v] of h.keys) if (v === k && (slot === undefined || s === slot)) return s;
    return undefined;
  }
  #do<T>(op: string, args: unknown[], fn: () => T): Promise<T> {
    try {
      this.faults.check(op, args);
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  isLuks(device: string): Promise<boolean> {
    return this.#do("isLuks", [device], () => this.headers.has(device));
  }
  dump(device: string): Promise<LuksInfo> {
    return this.#do("dump", [device], () => {
      const h = this.#header("dump", device);
      const kind = new Map<number, string>();
      for (const t of h.tokens.values()) {
        if (t.type.startsWith("machined-")) {
          for (const s of t.keyslots) kind.set(s, t.type.slice("machined-".length));
        }
      }
      return {
        slots: [...h.keys.keys()].sort((a, b) => a - b).map((slot) =>
          kind.has(slot) ? { slot, kind: kind.get(slot) } : { slot }
        ),
        tokens: new Map([...h.tokens].map(([id, t]) => [id, structuredClone(t)])),
        cipher: h.cipher,
        sectorSize: h.sectorSize,
        dataOffset: DATA_OFFSET,
      };
    });
  }
  format(device: string, key: Uint8Array, options: FormatOptions): Promise<void> {
    return this.#do("format", [device, options.slot], () => {
      this.headers.set(device, {
        keys: new Map([[options.slot, hex(key)]]),
        kdf: new Map([[options.slot, options.pbkdf ?? DEFAULT_PBKDF]]),
        tokens: new Map(),
        cipher: options.cipher ?? "aes-xts-plain64",
        sectorSize: options.sectorSize ?? 4096,
      });
    });
  }
  testKey(device: string, key: Uint8Array, slot?: number): Promise<boolean> {
    return this.#do(
      "testKey",
      [device, slot],
      () => this.#opens(this.#header("testKey", device), key, slot) !== undefined,
    );
  }
  open(device: string, name: string, key: Uint8Array): Promise<string> {
    return this.#do("open", [device, name], () => {
      if (this.#opens(this.#header("open", device), key) === undefined) {
        throw new KeyRejectedError(device, undefined);
      }
      const other = this.mapped.get(name);
      if (other !== undefined && other !== device) {
        throw new SysError("open", errnoValue("EEXIST"), name);
      }
      this.mapped.set(name, device);
      return `/dev/mapper/${name}`;
    });
  }
  close(name: string): Promise<void> {
    return this.#do("close", [name], () => void this.mapped.delete(name));
  }
  addKey(
    device: string,
    key: Uint8Array,
    newKey: Uint8Array,
    slot: number,
    pbkdf: Pbkdf = DEFAULT_PBKDF,
  ): Promise<void> {
    return this.#do("addKey", [device, slot], () => {
      const h = this.#header("addKey", device);
      if (this.#opens(h, key) === undefined) throw new KeyRejectedError(device, undefined);
      if (h.keys.has(slot)) throw new SysError("addKey", errnoValue("EEXIST"), `slot ${slot}`);
      h.keys.set(slot, hex(newKey));
      h.kdf.set(slot, pbkdf);
    });
  }
  /** The key derivation `slot` of `device` was made with (tests; the real one is in luksDump). */
  kdfOf(device: string, slot: number): Pbkdf | undefined {
    return this.headers.get(device)?.kdf.get(slot);
  }
  killSlot(device: string, slot: number): Promise<void> {
    return this.#do("killSlot", [device, slot], () => {
      const h = this.#header("killSlot", device);
      h.kdf.delete(slot);
      if (!h.keys.delete(slot)) {
        throw new SysError("killSlot", errnoValue("ENOENT"), `slot ${slot}`);
      }
      for (const [id, t] of h.tokens) if (t.keyslots.includes(slot)) h.tokens.delete(id);
    });
  }
  importToken(device: string, id: number, token: LuksToken): Promise<void> {
    return this.#do("importToken", [device, id], () => {
      const h = this.#header("importToken", device);
      if (h.tokens.has(id)) throw new SysError("importToken", errnoValue("EEXIST"), `token ${id}`);
      if (token.keyslots.some((s) => !h.keys.has(s))) {
        throw new SysError("importToken", errnoValue("EINVAL"), "token names an inactive slot");
      }
      h.tokens.set(id, structuredClone(token));
    });
  }
  async exportToken(device: string, id: number): Promise<LuksToken> {
    const t = (await this.dump(device)).tokens.get(id);
    if (!t) throw new RangeError(`"${device}" has no LUKS2 token ${id}`);
    return t;
  }
  erase(device: string): Promise<void> {
    return this.#do("erase", [device], () => void this.headers.delete(device));
  }
}
