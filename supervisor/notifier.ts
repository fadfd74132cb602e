/**
 * A level-free wake-up: `wait()` returns a promise that the next `notify()`
 * resolves. Taking the promise before checking conditions means a notify that
 * lands in between is never missed.
 */
export class Notifier {
  #resolve!: () => void;
  #promise!: Promise<void>;

  constructor() {
    this.#reset();
  }

  /** The promise the next {@link notify} resolves. */
  wait(): Promise<void> {
    return this.#promise;
  }

  /** Wakes every current waiter. */
  notify(): void {
    const resolve = this.#resolve;
    this.#reset();
    resolve();
  }

  #reset(): void {
    this.#promise = new Promise((r) => (this.#resolve = r));
  }
}
