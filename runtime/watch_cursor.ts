/**
 * One consumer of a shared watch log (runtime/watch_hub.ts): its own position
 * in the log, its own bootstrap and its own bound. It never copies events: it
 * reads the shared log at its position, and it holds the log's tail only while
 * it is within its capacity; past it, it lets go (the log may drop what it had
 * not read) and owes its consumer an `overflow{dropped}`.
 */
import type { Resource } from "./resource.ts";
import type { OverflowPolicy, Watch, WatchEvent } from "./watch.ts";

/** What a cursor reads: the shared log of one subscription. */
export interface CursorLog {
  /** Sequence number of the next event to be appended. */
  readonly head: number;
  /** The event at `seq` (held while some bounded cursor is at or before it). */
  at(seq: number): WatchEvent;
  /** The current contents, for a (re)bootstrap. */
  snapshot(): Resource[];
}

/** Internal: a shared log's handle on one consumer; consumers see a {@link Watch}. */
export class Cursor<R extends Resource = Resource> implements Watch<R> {
  #log: CursorLog;
  #pos: number;
  #bootstrap: R[];
  #bootstrapPending = true;
  #overflowed = false;
  #dropped = 0;
  #closeAfterOverflow = false;
  #closed = false;
  #waiting?: (r: IteratorResult<WatchEvent<R>>) => void;
  #onClose: () => void;

  constructor(
    log: CursorLog,
    readonly capacity: number,
    readonly policy: OverflowPolicy,
    onClose: () => void,
  ) {
    this.#log = log;
    this.#onClose = onClose;
    this.#pos = log.head;
    this.#bootstrap = log.snapshot() as R[];
  }

  /** The next sequence number this cursor will read; undefined once it no longer holds the log. */
  get position(): number | undefined {
    return this.#overflowed || this.#closed || this.#closeAfterOverflow ? undefined : this.#pos;
  }

  get pending(): number {
    return this.#overflowed || this.#closed ? 0 : this.#log.head - this.#pos;
  }

  /** Called by the log after each append, inside the store's write. Never blocks. */
  appended(): void {
    if (this.#closed || this.#closeAfterOverflow) return this.#wake();
    if (this.#overflowed) {
      this.#dropped++;
      return;
    }
    if (this.#log.head - this.#pos > this.capacity) {
      this.#dropped = this.#log.head - this.#pos;
      this.#overflowed = true;
    }
    this.#wake();
  }

  #wake(): void {
    if (!this.#waiting) return;
    const next = this.#take();
    if (!next) return;
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve(next);
  }

  #take(): IteratorResult<WatchEvent<R>> | undefined {
    if (this.#closed) return { value: undefined, done: true };
    if (this.#overflowed) return this.#takeOverflow();
    if (this.#closeAfterOverflow) {
      this.close();
      return { value: undefined, done: true };
    }
    if (this.#bootstrapPending) {
      const resource = this.#bootstrap.shift();
      if (resource) return { value: { kind: "created", resource }, done: false };
      this.#bootstrapPending = false;
      return { value: { kind: "bootstrapped" }, done: false };
    }
    if (this.#pos < this.#log.head) {
      return { value: this.#log.at(this.#pos++) as WatchEvent<R>, done: false };
    }
    return undefined;
  }

  /** The overflow marker; then a fresh bootstrap from the log's head, or the end. */
  #takeOverflow(): IteratorResult<WatchEvent<R>> {
    const dropped = this.#dropped;
    this.#overflowed = false;
    this.#dropped = 0;
    this.#pos = this.#log.head;
    if (this.policy === "close") {
      this.#closeAfterOverflow = true;
    } else {
      this.#bootstrap = this.#log.snapshot() as R[];
      this.#bootstrapPending = true;
    }
    return { value: { kind: "overflow", dropped }, done: false };
  }

  next(): Promise<IteratorResult<WatchEvent<R>>> {
    const ready = this.#take();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<WatchEvent<R>>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Stops reading and lets go of the log. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#bootstrap = [];
    this.#onClose();
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
