/**
 * A store watch: first the current contents, then a `bootstrapped` marker, then
 * live events in commit order. Writers push into a bounded queue and never
 * wait; a watcher that falls behind by more than its capacity gets an explicit
 * `overflow` event and is re-bootstrapped (or closed), never silent loss.
 */
import type { Resource } from "./resource.ts";
import { WatchStream } from "./watch_stream.ts";
import type { OverflowPolicy, Watch, WatchEvent } from "./watch_types.ts";

export type { OverflowPolicy, Watch, WatchEvent, WatchOptions } from "./watch_types.ts";

/** Internal: the store's handle on a watcher; it holds its own queue of live events. */
export class Watcher<R extends Resource = Resource> extends WatchStream<R> implements Watch<R> {
  #live: WatchEvent<R>[] = [];
  #head = 0;

  constructor(
    readonly filter: { namespace?: string; id?: string },
    capacity: number,
    policy: OverflowPolicy,
    snapshot: () => R[],
    onClose: () => void,
  ) {
    super(capacity, policy, snapshot, onClose);
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
    if (this.closed) return;
    if (this.pending === 0 && this.handOff(event)) return;
    if (this.dropWhileOverflowed()) return;
    if (this.pending >= this.capacity) {
      const dropped = this.pending + 1;
      this.#live = [];
      this.#head = 0;
      return this.overflow(dropped);
    }
    this.#live.push(event);
    this.wake();
  }

  protected override takeLive(): WatchEvent<R> | undefined {
    if (this.pending === 0) return undefined;
    const value = this.#live[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#live.length) {
      this.#live = this.#live.slice(this.#head);
      this.#head = 0;
    }
    return value;
  }

  protected override releaseLive(): void {
    this.#live = [];
  }
}
