/**
 * One consumer of a shared watch log (runtime/watch_hub.ts): its own position
 * in the log, its own bootstrap and its own bound. It never copies events: it
 * reads the shared log at its position, and it holds the log's tail only while
 * it is within its capacity; past it, it lets go (the log may drop what it had
 * not read) and owes its consumer an `overflow{dropped}`.
 */
import type { Resource } from "./resource.ts";
import type { OverflowPolicy, Watch, WatchEvent } from "./watch.ts";
import { WatchStream } from "./watch_stream.ts";

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
export class Cursor<R extends Resource = Resource> extends WatchStream<R> implements Watch<R> {
  #log: CursorLog;
  #pos: number;

  constructor(
    log: CursorLog,
    capacity: number,
    policy: OverflowPolicy,
    onClose: () => void,
  ) {
    super(capacity, policy, () => log.snapshot() as R[], onClose);
    this.#log = log;
    this.#pos = log.head;
  }

  /** The next sequence number this cursor will read; undefined once it no longer holds the log. */
  get position(): number | undefined {
    return this.overflowed || this.closed || this.closing ? undefined : this.#pos;
  }

  get pending(): number {
    return this.overflowed || this.closed ? 0 : this.#log.head - this.#pos;
  }

  /** Called by the log after each append, inside the store's write. Never blocks. */
  appended(): void {
    if (this.closed || this.closing) return this.wake();
    if (this.dropWhileOverflowed()) return;
    const behind = this.#log.head - this.#pos;
    if (behind > this.capacity) return this.overflow(behind);
    this.wake();
  }

  protected override takeLive(): WatchEvent<R> | undefined {
    if (this.#pos >= this.#log.head) return undefined;
    return this.#log.at(this.#pos++) as WatchEvent<R>;
  }

  /** Reading restarts at the log's head, after the fresh bootstrap. */
  protected override restartLive(): void {
    this.#pos = this.#log.head;
  }
}
