/**
 * The consumer side of every watch: the bootstrap, its `bootstrapped` marker,
 * then live events; past its capacity an `overflow{dropped}` marker, then a
 * fresh bootstrap (or the end, by policy). The store's own queue
 * (runtime/watch.ts) and the shared-watch cursor (runtime/watch_cursor.ts)
 * differ only in where live events are held, so they share this one state
 * machine and cannot drift apart on Store.watch's overflow semantics.
 */
import type { Resource } from "./resource.ts";
import type { OverflowPolicy, Watch, WatchEvent } from "./watch_types.ts";

/** Internal: a watch's phases and its waiting consumer; subclasses hold the live events. */
export abstract class WatchStream<R extends Resource = Resource> implements Watch<R> {
  #snapshot: () => R[];
  #bootstrap: R[];
  #bootstrapPending = true;
  #overflowed = false;
  #dropped = 0;
  #closeAfterOverflow = false;
  #closed = false;
  #waiting?: (r: IteratorResult<WatchEvent<R>>) => void;
  #onClose: () => void;

  constructor(
    readonly capacity: number,
    readonly policy: OverflowPolicy,
    snapshot: () => R[],
    onClose: () => void,
  ) {
    this.#snapshot = snapshot;
    this.#onClose = onClose;
    this.#bootstrap = snapshot();
  }

  /** Live events waiting to be consumed. */
  abstract get pending(): number;

  /** The next live event, or undefined when none is waiting. */
  protected abstract takeLive(): WatchEvent<R> | undefined;

  /** Called as the overflow marker is handed out, before any re-bootstrap: restart live reading. */
  protected restartLive(): void {}

  /** Called once on close: let go of the live events. */
  protected releaseLive(): void {}

  /** The watch has ended; nothing more is delivered. */
  protected get closed(): boolean {
    return this.#closed;
  }

  /** The overflow marker went out under the "close" policy; the next take ends the watch. */
  protected get closing(): boolean {
    return this.#closeAfterOverflow;
  }

  /** Past capacity; the overflow marker has not been taken yet. */
  protected get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Hands `event` straight to a waiting consumer that has nothing before it; true when it did. */
  protected handOff(event: WatchEvent<R>): boolean {
    if (!this.#waiting || this.#bootstrapPending || this.#overflowed) return false;
    const resolve = this.#waiting;
    this.#waiting = undefined;
    resolve({ value: event, done: false });
    return true;
  }

  /** While overflowed, counts one more dropped event; true when it did. */
  protected dropWhileOverflowed(): boolean {
    if (!this.#overflowed) return false;
    this.#dropped++;
    return true;
  }

  /** Marks an overflow of `dropped` events; the consumer gets the marker next. */
  protected overflow(dropped: number): void {
    this.#dropped = dropped;
    this.#overflowed = true;
    this.wake();
  }

  /** Resolves a waiting consumer if there is something for it now. */
  protected wake(): void {
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
    const value = this.takeLive();
    return value ? { value, done: false } : undefined;
  }

  /** The overflow marker; then a fresh bootstrap, or the end. */
  #takeOverflow(): IteratorResult<WatchEvent<R>> {
    const dropped = this.#dropped;
    this.#overflowed = false;
    this.#dropped = 0;
    this.restartLive();
    if (this.policy === "close") {
      this.#closeAfterOverflow = true;
    } else {
      this.#bootstrap = this.#snapshot();
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

  /** Stops the watch and lets go of what it holds. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.releaseLive();
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
