/**
 * A log file rotated by size: `<path>` grows until it would pass `maxBytes`,
 * then becomes `<path>.1` (older ones shift to `.2` ... `.keep`, the oldest is
 * deleted). Appends are queued and written in batches by one writer, so a
 * chatty service costs one write per batch and never blocks the event loop.
 */

/** Options of {@link RotatingLogFile}. */
export interface RotationOptions {
  /** Size at which the file is rotated. @default 4 MiB */
  maxBytes?: number;
  /** Rotated files kept besides the current one. @default 3 */
  keep?: number;
  /**
   * Called when writing starts failing (with the error) and when it works
   * again (with undefined), so the owner can surface it; never per line.
   */
  onHealth?: (error: unknown | undefined) => void;
}

/** One rotating log file; {@link close} it. */
export class RotatingLogFile {
  readonly maxBytes: number;
  readonly keep: number;
  #pending: string[] = [];
  #file?: Deno.FsFile;
  #size = 0;
  #writing?: Promise<void>;
  #closed = false;
  /**
   * The current write error (undefined once a write succeeds again): a full
   * disk must not throw into the service's log pump, so it is kept here and
   * reported through `onHealth`.
   */
  lastError?: unknown;
  readonly #onHealth?: (error: unknown | undefined) => void;

  constructor(readonly path: string, options: RotationOptions = {}) {
    this.#onHealth = options.onHealth;
    this.maxBytes = options.maxBytes ?? 4 << 20;
    this.keep = options.keep ?? 3;
    if (this.maxBytes < 1) throw new RangeError(`maxBytes must be positive, got ${this.maxBytes}`);
    if (this.keep < 0) throw new RangeError(`keep must not be negative, got ${this.keep}`);
  }

  /** Queues a line (a newline is added). Dropped after {@link close}. */
  append(line: string): void {
    if (this.#closed) return;
    this.#pending.push(line + "\n");
    this.#writing ??= this.#drain();
  }

  /** Resolves once everything appended so far is written. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    this.#file?.close();
    this.#file = undefined;
  }

  async #drain(): Promise<void> {
    const encoder = new TextEncoder();
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0);
        for (const chunk of this.#chunks(batch)) {
          const bytes = encoder.encode(chunk);
          if (this.#size > 0 && this.#size + bytes.length > this.maxBytes) await this.#rotate();
          const file = await this.#open();
          let written = 0;
          while (written < bytes.length) written += await file.write(bytes.subarray(written));
          this.#size += bytes.length;
        }
      }
      if (this.lastError !== undefined) {
        this.lastError = undefined;
        this.#onHealth?.(undefined);
      }
    } catch (e) {
      const first = this.lastError === undefined;
      this.lastError = e;
      this.#pending = [];
      // The file may be gone or broken: reopen on the next append.
      try {
        this.#file?.close();
      } catch { /* already closed */ }
      this.#file = undefined;
      if (first) this.#onHealth?.(e);
    } finally {
      this.#writing = undefined;
    }
  }

  /** Groups lines into chunks that each fit in one file (one oversized line stands alone). */
  *#chunks(lines: string[]): Generator<string> {
    let chunk = "";
    let size = this.#size;
    for (const line of lines) {
      const n = new TextEncoder().encode(line).length;
      if (chunk !== "" && size + n > this.maxBytes) {
        yield chunk;
        chunk = "";
        size = 0;
      }
      chunk += line;
      size += n;
    }
    if (chunk !== "") yield chunk;
  }

  async #open(): Promise<Deno.FsFile> {
    if (!this.#file) {
      this.#file = await Deno.open(this.path, { append: true, create: true, mode: 0o640 });
      this.#size = (await this.#file.stat()).size;
    }
    return this.#file;
  }

  async #rotate(): Promise<void> {
    this.#file?.close();
    this.#file = undefined;
    this.#size = 0;
    if (this.keep === 0) {
      await Deno.remove(this.path).catch(ignoreNotFound);
      return;
    }
    await Deno.remove(`${this.path}.${this.keep}`).catch(ignoreNotFound);
    for (let i = this.keep - 1; i >= 1; i--) {
      await Deno.rename(`${this.path}.${i}`, `${this.path}.${i + 1}`).catch(ignoreNotFound);
    }
    await Deno.rename(this.path, `${this.path}.1`).catch(ignoreNotFound);
  }
}

function ignoreNotFound(e: unknown): void {
  if (!(e instanceof Deno.errors.NotFound)) throw e;
}
