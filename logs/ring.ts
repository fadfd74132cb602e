/**
 * A bounded ring of log lines with followers: service output and machined's own
 * log go here, so `machinectl logs ID [-f] [--tail N]` works without a disk.
 */

/** One captured line. */
export interface LogLine {
  readonly seq: number;
  /** Epoch milliseconds. */
  readonly time: number;
  readonly stream: "stdout" | "stderr" | "log";
  readonly text: string;
}

/** A fixed-capacity ring buffer of lines with live followers. */
export class LogRing {
  #lines: (LogLine | undefined)[];
  #next = 0;
  #seq = 0;
  #followers = new Set<(line: LogLine) => void>();
  #capacity: number;

  constructor(capacity = 2000, readonly now: () => number = Date.now) {
    if (capacity < 1) throw new RangeError(`LogRing capacity must be at least 1, got ${capacity}`);
    this.#capacity = capacity;
    this.#lines = new Array(capacity);
  }

  /** Lines kept. */
  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Changes how many lines are kept, live: growing keeps every line, shrinking
   * keeps the newest `capacity`. Followers are unaffected.
   * @throws RangeError when `capacity` is below 1.
   */
  resize(capacity: number): void {
    if (capacity < 1) throw new RangeError(`LogRing capacity must be at least 1, got ${capacity}`);
    if (capacity === this.#capacity) return;
    const kept = this.tail(capacity);
    this.#capacity = capacity;
    this.#lines = new Array(capacity);
    kept.forEach((l, i) => (this.#lines[i] = l));
    this.#next = kept.length % capacity;
  }

  /** Appends a line (overwriting the oldest when full) and notifies followers. */
  push(stream: LogLine["stream"], text: string): LogLine {
    const line: LogLine = { seq: ++this.#seq, time: this.now(), stream, text };
    this.#lines[this.#next] = line;
    this.#next = (this.#next + 1) % this.capacity;
    for (const f of this.#followers) f(line);
    return line;
  }

  /** The last `n` lines (all when omitted), oldest first. */
  tail(n = this.capacity): LogLine[] {
    const out: LogLine[] = [];
    for (let i = 0; i < this.capacity; i++) {
      const l = this.#lines[(this.#next + i) % this.capacity];
      if (l) out.push(l);
    }
    return n >= out.length ? out : out.slice(out.length - Math.max(0, n));
  }

  /** Total lines ever pushed. */
  get written(): number {
    return this.#seq;
  }

  /**
   * The last `tail` lines, then (when `follow`) every new line until `signal` aborts.
   * A follower that falls `maxBacklog` lines behind is ended rather than growing memory.
   */
  async *read(
    options: { tail?: number; follow?: boolean; signal?: AbortSignal; maxBacklog?: number } = {},
  ): AsyncGenerator<LogLine> {
    const backlog: LogLine[] = [];
    let wake: (() => void) | undefined;
    let overflow = false;
    const follower = (l: LogLine) => {
      if (backlog.length >= (options.maxBacklog ?? 10_000)) overflow = true;
      else backlog.push(l);
      wake?.();
    };
    if (options.follow) this.#followers.add(follower);
    const onAbort = () => wake?.();
    options.signal?.addEventListener("abort", onAbort);
    try {
      for (const l of this.tail(options.tail)) yield l;
      while (options.follow && !options.signal?.aborted && !overflow) {
        const l = backlog.shift();
        if (l) {
          yield l;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.#followers.delete(follower);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }
}
