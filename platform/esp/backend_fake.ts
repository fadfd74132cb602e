/**
 * An in-memory ESP with power-cut injection: `cutAt(n)` makes the n-th
 * operation (counted from 0 across write sessions) fail with {@link PowerCut}
 * and every later one too, leaving the files as a real power loss after that
 * many completed operations would. A test may tear a file cut while it was
 * written: the real backend leaves it at one of its growth steps (zeros) or
 * at its full size with a zero tail (dir_files.ts), and a torn `*.new` or
 * `*.tmp` must be rejected by verify or removed by the next clean.
 */
import { type EspBackend, type EspFiles, sizedChunks } from "./backend.ts";

/** The machine lost power: nothing after this operation happened. */
export class PowerCut extends Error {
  override name = "PowerCut";
}

/** Operation names the fake counts. */
export type EspOp = "writeFile" | "rename" | "remove" | "syncDir";

/** Where {@link FakeEspBackend}'s `hostPath` says its files are (nothing is there). */
export const FAKE_ESP_HOST_ROOT = "/fake-esp";

/** See the module doc. */
export class FakeEspBackend implements EspBackend {
  /** The medium: absolute path → bytes. */
  readonly files = new Map<string, Uint8Array>();
  /** Every mutating operation done, in order (`rename /B/x.new /B/x`). */
  readonly log: string[] = [];
  /** Sessions opened read-write. */
  writeSessions = 0;
  #ops = 0;
  #cutAt = Infinity;
  #dead = false;
  #writable = false;

  constructor(initial: Record<string, string | Uint8Array> = {}) {
    for (const [p, d] of Object.entries(initial)) {
      this.files.set(p, typeof d === "string" ? new TextEncoder().encode(d) : d);
    }
  }

  /** Cut the power at mutating operation number `n` (0-based). */
  cutAt(n: number): void {
    this.#cutAt = n;
  }

  /** Power back on: operations work again (the counter keeps counting). */
  powerOn(): void {
    this.#dead = false;
    this.#cutAt = Infinity;
  }

  /** Mutating operations so far. */
  get ops(): number {
    return this.#ops;
  }

  /** Bytes as read back from the medium (to simulate a medium that returns other bytes). */
  onRead?: (path: string, bytes: Uint8Array) => Uint8Array;

  /**
   * The medium's size in bytes: a write whose declared size would not fit
   * fails before its first byte, as the real backend's preallocation does
   * with the kernel's ENOSPC (an Error with `code` "ENOSPC"), leaving the
   * file empty.
   */
  capacity = Infinity;

  /** Whether an operation outside write() tried to change the medium (must stay false). */
  wroteWhileReadOnly = false;

  text(path: string): string | undefined {
    const b = this.files.get(path);
    return b && new TextDecoder().decode(b);
  }

  read<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    return fn(this.#fs());
  }

  async write<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    this.writeSessions++;
    this.#writable = true;
    try {
      return await fn(this.#fs());
    } finally {
      this.#writable = false;
    }
  }

  #step(op: EspOp, detail: string): void {
    if (!this.#writable) {
      this.wroteWhileReadOnly = true;
      throw new Deno.errors.PermissionDenied(`${op} ${detail}: the ESP is mounted read-only`);
    }
    if (this.#dead || this.#ops >= this.#cutAt) {
      this.#dead = true;
      throw new PowerCut(`power cut before ${op} ${detail}`);
    }
    this.#ops++;
    this.log.push(`${op} ${detail}`);
  }

  #used(): number {
    let n = 0;
    for (const b of this.files.values()) n += b.length;
    return n;
  }

  async *#chunks(path: string): AsyncGenerator<Uint8Array> {
    const stored = this.files.get(path);
    if (!stored) throw new Deno.errors.NotFound(path);
    const b = this.onRead ? this.onRead(path, stored) : stored;
    for (let at = 0; at < b.length; at += 4096) yield b.slice(at, at + 4096);
  }

  #fs(): EspFiles {
    const files = this.files;
    return {
      list: (dir) => {
        const prefix = dir.endsWith("/") ? dir : `${dir}/`;
        const names = [...files.keys()].filter((p) => p.startsWith(prefix))
          .map((p) => p.slice(prefix.length)).filter((n) => n && !n.includes("/"));
        return Promise.resolve(names.sort());
      },
      readText: (path) => {
        const b = files.get(path);
        if (!b) return Promise.reject(new Deno.errors.NotFound(path));
        return Promise.resolve(new TextDecoder().decode(b));
      },
      readChunks: (path) => this.#chunks(path),
      hostPath: (path) => `${FAKE_ESP_HOST_ROOT}${path}`,
      writeFile: async (path, content) => {
        this.#step("writeFile", path);
        files.set(path, new Uint8Array(0));
        if (this.#used() + content.size > this.capacity) {
          throw Object.assign(new Error(`write ${path}: No space left on device (os error 28)`), {
            code: "ENOSPC",
          });
        }
        for await (const c of sizedChunks(path, content)) {
          if (this.#dead) throw new PowerCut(`power cut while writing ${path}`);
          const old = files.get(path)!;
          const next = new Uint8Array(old.length + c.length);
          next.set(old);
          next.set(c, old.length);
          files.set(path, next);
        }
      },
      rename: (from, to) => {
        this.#step("rename", `${from} ${to}`);
        const b = files.get(from);
        if (!b) return Promise.reject(new Deno.errors.NotFound(from));
        files.delete(from);
        files.set(to, b);
        return Promise.resolve();
      },
      remove: (path) => {
        this.#step("remove", path);
        files.delete(path);
        return Promise.resolve();
      },
      syncDir: (dir) => {
        this.#step("syncDir", dir);
        return Promise.resolve();
      },
    };
  }
}
