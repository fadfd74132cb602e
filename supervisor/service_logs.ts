/**
 * Service output: every line a service writes goes into that service's
 * bounded {@link LogRing} (so `machinectl logs` works before any disk is
 * mounted) and, once a log directory is set (`/var/log` after EPHEMERAL is
 * mounted), into `<dir>/<id>.log`, rotated by size. machined's own ring is
 * served under the id `machined`.
 */
import { type LogLine, LogRing } from "../logs/mod.ts";
import { RotatingLogFile, type RotationOptions } from "./rotating_log_file.ts";

/** The id under which machined's own log is served. */
export const MACHINED_LOG_ID = "machined";

/** `logs()` was asked for an id with no log. */
export class UnknownLogError extends Error {
  override name = "UnknownLogError";
  constructor(readonly id: string) {
    super(`No log for "${id}": no such service`);
  }
}

/** Options of {@link ServiceLogs}. */
export interface ServiceLogsOptions {
  /** Lines kept per service in memory. @default 2000 */
  ringLines?: number;
  /** machined's own ring, served as `machined`. */
  machinedLog?: LogRing;
  /** Rotation of the files in the log directory. */
  rotation?: RotationOptions;
  now?: () => number;
  /**
   * Writing `id`'s log file started failing (`error`) or works again
   * (undefined); the lines still reach the ring.
   */
  onFileHealth?: (id: string, path: string, error: unknown | undefined) => void;
}

/** Options of {@link ServiceLogs.read}. */
export interface LogReadOptions {
  /** Only the last `tail` lines of the backlog. @default all kept */
  tail?: number;
  /** Keep streaming new lines until `signal` aborts. */
  follow?: boolean;
  signal?: AbortSignal;
}

/** Per-service rings and files. */
export class ServiceLogs {
  #rings = new Map<string, LogRing>();
  #files = new Map<string, RotatingLogFile>();
  #dir?: string;
  #ringLines?: number;
  readonly #options: ServiceLogsOptions;

  constructor(options: ServiceLogsOptions = {}) {
    this.#options = options;
  }

  /** The log directory in use, if any. */
  get directory(): string | undefined {
    return this.#dir;
  }

  /**
   * Starts (or stops, with undefined) writing service logs under `dir`.
   * Lines already in the rings are written first, so nothing from early boot is lost.
   */
  async setDirectory(dir: string | undefined): Promise<void> {
    if (dir === this.#dir) return;
    await this.#closeFiles();
    this.#dir = dir;
    if (dir === undefined) return;
    await Deno.mkdir(dir, { recursive: true });
    for (const [id, ring] of this.#rings) {
      const file = this.#file(id)!;
      for (const l of ring.tail()) file.append(formatLine(l));
    }
  }

  /** Lines kept per service ring. */
  get ringLines(): number {
    return this.#ringLines ?? this.#options.ringLines ?? 2000;
  }

  /**
   * Changes the lines kept per service, live: every existing ring is resized
   * (shrinking keeps the newest lines) and new rings get the new size.
   */
  setRingLines(lines: number): void {
    this.#ringLines = lines;
    for (const ring of this.#rings.values()) ring.resize(lines);
  }

  /** The ring of `id`, created on first use. */
  ring(id: string): LogRing {
    let ring = this.#rings.get(id);
    if (!ring) {
      ring = new LogRing(this.ringLines, this.#options.now);
      this.#rings.set(id, ring);
    }
    return ring;
  }

  /** Records one line of `id`'s output. */
  push(id: string, stream: "stdout" | "stderr", text: string): void {
    const line = this.ring(id).push(stream, text);
    this.#file(id)?.append(formatLine(line));
  }

  /** Whether `id` has a log (a service that ever ran, or `machined`). */
  has(id: string): boolean {
    return this.#rings.has(id) || (id === MACHINED_LOG_ID && !!this.#options.machinedLog);
  }

  /**
   * The last lines of `id`, then, with `follow`, new ones as they come.
   * @throws UnknownLogError when `id` has no log.
   */
  read(id: string, options: LogReadOptions = {}): AsyncIterable<LogLine> {
    const ring = id === MACHINED_LOG_ID ? this.#options.machinedLog : this.#rings.get(id);
    if (!ring) throw new UnknownLogError(id);
    return ring.read(options);
  }

  /** Forgets a removed service's ring and closes its file. */
  async drop(id: string): Promise<void> {
    this.#rings.delete(id);
    const file = this.#files.get(id);
    this.#files.delete(id);
    await file?.close();
  }

  /** Waits until every queued line is on disk. */
  async flush(): Promise<void> {
    await Promise.all([...this.#files.values()].map((f) => f.flush()));
  }

  /** Closes every file (rings stay readable). */
  close(): Promise<void> {
    return this.#closeFiles();
  }

  #file(id: string): RotatingLogFile | undefined {
    if (this.#dir === undefined) return undefined;
    let file = this.#files.get(id);
    if (!file) {
      const path = `${this.#dir}/${id}.log`;
      const onFileHealth = this.#options.onFileHealth;
      file = new RotatingLogFile(path, {
        ...this.#options.rotation,
        onHealth: onFileHealth ? (error) => onFileHealth(id, path, error) : undefined,
      });
      this.#files.set(id, file);
    }
    return file;
  }

  async #closeFiles(): Promise<void> {
    const files = [...this.#files.values()];
    this.#files.clear();
    await Promise.all(files.map((f) => f.close()));
  }
}

/** One line as written to a file: RFC 3339 time, stream, text. */
export function formatLine(l: LogLine): string {
  return `${new Date(l.time).toISOString()} ${l.stream} ${l.text}`;
}
