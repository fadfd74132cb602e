/**
 * An unbounded async queue with timed waits, used by the fake backend's
 * subscriptions and sockets. Timers are always cleared, so Deno's test
 * sanitizers stay quiet.
 * @module
 */

/** FIFO of `T` with `next(timeoutMs)` and close. */
export class EventQueue<T> {
  #items: T[] = [];
  #waiters: Array<(v: T | undefined) => void> = [];
  #closed = false;

  /** Queue an item (dropped once closed). */
  push(item: T): void {
    if (this.#closed) return;
    const w = this.#waiters.shift();
    if (w) w(item);
    else this.#items.push(item);
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The next item, or undefined after `timeoutMs` or once closed. */
  next(timeoutMs: number): Promise<T | undefined> {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    if (this.#closed || timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(undefined);
      }, timeoutMs);
      const waiter = (v: T | undefined) => {
        clearTimeout(timer);
        resolve(v);
      };
      this.#waiters.push(waiter);
    });
  }

  /** Wake every waiter with undefined; later `next` calls resolve undefined. */
  close(): void {
    this.#closed = true;
    this.#items = [];
    for (const w of this.#waiters.splice(0)) w(undefined);
  }

  /** Yield items until closed. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (!this.#closed) {
      const v = await this.next(60_000);
      if (v !== undefined) yield v;
    }
  }
}
