/**
 * A store watch: first the current contents, then a `bootstrapped` marker, then
 * live events in commit order. Writers push into a bounded queue and never
 * wait; a watcher that falls behind by more than its capacity gets an explicit
 * `overflow` event and is re-bootstrapped (or closed), never silent loss.
 */
import type { Resource } from "./resource.ts";

/** One item of a watch stream. */
export type WatchEvent<R extends Resource = Resource> =
  | { readonly kind: "created"; readonly resource: R }
  | { readonly kind: "updated"; readonly resource: R; readonly old: R }
  | { readonly kind: "destroyed"; readonly resource: R }
  /** Everything that existed when the watch (re)started has been delivered. */
  | { readonly kind: "bootstrapped" }
  /** The watcher fell behind; `dropped` live events were discarded. A re-bootstrap follows unless closed. */
  | { readonly kind: "overflow"; readonly dropped: number };

/** What happens when a watcher's queue overflows. */
export type OverflowPolicy = "rebootstrap" | "close";

/** Options of {@link Store.watch}. */
export interface WatchOptions {
  namespace?: string;
  id?: string;
  /** Live events held for a slow consumer before overflow. @default 4096 */
  capacity?: number;
  /** @default "rebootstrap" */
  onOverflow?: OverflowPolicy;
  /** Closes the watch when aborted. */
  signal?: AbortSignal;
}

/** The consumer side of a watch: an async iterable that must be closed. */
export interface Watch<R extends Resource = Resource> extends AsyncIterableIterator<WatchEvent<R>> {
  /** Stops the watch and releases it from the store. Idempotent. */
  close(): void;
  /** Live events waiting to be consumed. */
  readonly pending: number;
}

/** Internal: the store's handle on a watcher. */
export class Watcher<R extends Resource = Resource> implements Watch<R> {
  #snapshot: () => R[];
  #bootstrap: R[] = [];
  #bootstrapPending = true;
  #live: WatchEvent<R>[] = [];
  #head = 0;
  #overflowed = false;
  #dropped = 0;
  #closeAfterOverflow = false;
  #closed = false;
  #waiting?: (r: IteratorResult<WatchEvent<R>>) => void;
  #onClose: () => void;

  constructor(
    readonly filter: { namespace?: string; id?: string },
    readonly capacity: number,
    readonly policy: OverflowPolicy,
    snapshot: () => R[],
    onClose: () => void,
  ) {
    this.#snapshot = snapshot;
    this.#onClose = onClose;
    this.#bootstrap = snapshot();
  }

  /** True when this watcher wants events about `r`. */
  matches(r: Resource): boolean {
    return (this.filter.namespace === undefined ||
      r.metadata.namespace === this.filter.namespace) &&
      (this.filter.id === undefined || r.metadata.id === this.filter.id);
  }

  get pending(): number {
    return this.#live.length - this.#head;
  }

  /** Called by writers, synchronously, in commit order. Never blocks. */
  push(event: WatchEvent<R>): void {
    if (this.#closed) return;
    if (this.#waiting && this.pending === 0 && !this.#bootstrapPending && !this.#overflowed) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: event, done: false });
      return;
    }
    if (this.#overflowed) {
      this.#dropped++;
      return;
    }
    if (this.pending >= this.capacity) {
      this.#dropped = this.pending + 1;
      this.#live = [];
      this.#head = 0;
      this.#overflowed = true;
      this.#wake();
      return;
    }
    this.#live.push(event);
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
    if (this.#overflowed) {
      const dropped = this.#dropped;
      this.#overflowed = false;
      this.#dropped = 0;
      if (this.policy === "close") {
        this.#closeAfterOverflow = true;
      } else {
        this.#bootstrap = this.#snapshot();
        this.#bootstrapPending = true;
      }
      return { value: { kind: "overflow", dropped }, done: false };
    }
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
    if (this.pending > 0) {
      const value = this.#live[this.#head++];
      if (this.#head > 1024 && this.#head * 2 > this.#live.length) {
        this.#live = this.#live.slice(this.#head);
        this.#head = 0;
      }
      return { value, done: false };
    }
    return undefined;
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

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#live = [];
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
