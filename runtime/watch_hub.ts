/**
 * Shared watches: many consumers of one (type, namespace, id) share one store
 * subscription and one log of its events, each reading the log at its own
 * cursor. A commit is appended once, whatever the number of consumers, and the
 * log holds only what the slowest consumer within its bound has not read, so
 * a thousand API streams cost one subscription and one bounded log instead of
 * a thousand queues. A consumer that falls more than its capacity behind
 * overflows alone, with the same explicit `overflow{dropped}` then
 * re-bootstrap (or close) as {@link Store.watch}; the others read on.
 */
import type { Catalog, Resource, ResourceOf, TypeName } from "./resource.ts";
import type { Store } from "./store.ts";
import type { Watch, WatchEvent, WatchOptions } from "./watch.ts";
import { Cursor, type CursorLog } from "./watch_cursor.ts";

/** Options of {@link WatchHub.watch}: those of {@link Store.watch}. */
export type SharedWatchOptions = WatchOptions;

/** One shared subscription and its log. */
class Topic implements CursorLog {
  /** Events from sequence number `base` on. */
  #log: WatchEvent[] = [];
  #base = 0;
  readonly cursors = new Set<Cursor>();
  #unsubscribe: () => void = () => {};

  constructor(readonly snapshot: () => Resource[]) {}

  /** Starts the store subscription (before any cursor takes its snapshot). */
  open(subscribe: (push: (e: WatchEvent) => void) => () => void): void {
    this.#unsubscribe = subscribe((e) => this.#append(e));
  }

  get head(): number {
    return this.#base + this.#log.length;
  }

  /** Retained events (for tests and metrics). */
  get retained(): number {
    return this.#log.length;
  }

  at(seq: number): WatchEvent {
    return this.#log[seq - this.#base];
  }

  close(): void {
    this.#unsubscribe();
    this.#log = [];
  }

  /** A cursor left: what only it held may go. */
  release(): void {
    let min = this.head;
    for (const c of this.cursors) {
      const p = c.position;
      if (p !== undefined && p < min) min = p;
    }
    this.#trim(min);
  }

  /** Called by the store inside the write: one append, then each cursor is woken or bounded. */
  #append(event: WatchEvent): void {
    this.#log.push(event);
    let min = this.head;
    for (const c of this.cursors) {
      c.appended();
      const p = c.position;
      if (p !== undefined && p < min) min = p;
    }
    this.#trim(min);
  }

  /** Drops what every bounded cursor has read, in batches so the copy stays amortized O(1). */
  #trim(min: number): void {
    const drop = min - this.#base;
    if (drop <= 0 || (drop < 256 && drop * 2 < this.#log.length)) return;
    this.#log = drop === this.#log.length ? [] : this.#log.slice(drop);
    this.#base = min;
  }
}

/**
 * Shared watches over a store; see the module doc. Generic: it knows the store's
 * catalog only as type names.
 *
 * @example
 * ```ts
 * const hub = new WatchHub(store);
 * const a = hub.watch("Greeting"); // opens the store subscription
 * const b = hub.watch("Greeting"); // shares it
 * a.close();
 * b.close(); // the last consumer leaves: the subscription closes
 * ```
 */
export class WatchHub<M extends Catalog> {
  #store: Store<M>;
  #topics = new Map<string, Topic>();

  constructor(store: Store<M>) {
    this.#store = store;
  }

  /**
   * A watch with {@link Store.watch}'s contract (contents, `bootstrapped`, live
   * events in commit order, explicit overflow), sharing the subscription of
   * every open watch with the same type, namespace and id. Close it when done.
   */
  watch<K extends TypeName<M>>(type: K, options: SharedWatchOptions = {}): Watch<ResourceOf<M, K>> {
    const filter = { namespace: options.namespace, id: options.id };
    const key = `${type}\u0000${filter.namespace ?? "\u0001*"}\u0000${filter.id ?? "\u0001*"}`;
    let topic = this.#topics.get(key);
    if (!topic) {
      const t = topic = new Topic(() =>
        this.#store.list(type, { namespace: filter.namespace }).filter((r) =>
          filter.id === undefined || r.metadata.id === filter.id
        )
      );
      t.open((push) => this.#store.subscribe(type, filter, push));
      this.#topics.set(key, t);
    }
    const t = topic;
    const cursor = new Cursor(
      t,
      options.capacity ?? 4096,
      options.onOverflow ?? "rebootstrap",
      () => {
        t.cursors.delete(cursor);
        if (t.cursors.size > 0) return t.release();
        t.close();
        this.#topics.delete(key);
      },
    );
    t.cursors.add(cursor);
    if (options.signal) {
      if (options.signal.aborted) cursor.close();
      else options.signal.addEventListener("abort", () => cursor.close(), { once: true });
    }
    return cursor as unknown as Watch<ResourceOf<M, K>>;
  }

  /** Shared subscriptions open (one per distinct type, namespace and id). */
  get subscriptions(): number {
    return this.#topics.size;
  }

  /** Open watches across every subscription. */
  get watches(): number {
    let n = 0;
    for (const t of this.#topics.values()) n += t.cursors.size;
    return n;
  }

  /** Events held in the shared logs, for leak checks: at most the bound behind the slowest. */
  get retained(): number {
    let n = 0;
    for (const t of this.#topics.values()) n += t.retained;
    return n;
  }
}
