/**
 * An unbounded async queue: producers `push`, one consumer iterates. Used to
 * fan exits out to subscribers without polling.
 * @module
 */

/** Push values; iterate them asynchronously; `close` ends the iteration. */
export class AsyncQueue<T> implements AsyncIterableIterator<T> {
  #items: T[] = [];
  #waiting: Array<(r: IteratorResult<T>) => void> = [];
  #closed = false;
  readonly #onReturn?: () => void;

  /** @param onReturn called once when the consumer stops or the queue closes. */
  constructor(onReturn?: () => void) {
    this.#onReturn = onReturn;
  }

  /** Whether {@link close} (or the consumer's `return`) has happened. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Deliver a value (dropped once closed). */
  push(value: T): void {
    if (this.#closed) return;
    const waiter = this.#waiting.shift();
    if (waiter) waiter({ value, done: false });
    else this.#items.push(value);
  }

  /** End the iteration after queued values are taken. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#waiting.splice(0)) w({ value: undefined, done: true });
    this.#onReturn?.();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#items.length > 0) {
      return Promise.resolve({ value: this.#items.shift()!, done: false });
    }
    if (this.#closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.#items = [];
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
