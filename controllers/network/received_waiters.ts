/**
 * Test support for the fake DHCP servers (dhcp_fake_server.ts and
 * dhcp6_fake_server.ts): waiting for a received message that matches, one
 * already received or the next to arrive, with a timeout. One copy for both.
 *
 * @module
 */

/** Pending `first` calls, settled as messages arrive. */
export class ReceivedWaiters<T> {
  #waiters: Array<{ pred: (m: T) => boolean; resolve: (m: T) => void }> = [];

  constructor(readonly what: string) {}

  /**
   * The first of `received` matching `pred`, else the next one {@link arrived}
   * that does. @throws Error when none matched within `timeoutMs`.
   */
  first(received: readonly T[], pred: (m: T) => boolean, timeoutMs: number): Promise<T> {
    const seen = received.find(pred);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.resolve !== done);
        reject(new Error(`${this.what}: no matching message within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (m: T) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.#waiters.push({ pred, resolve: done });
    });
  }

  /** Settles every waiter `m` matches. */
  arrived(m: T): void {
    for (const w of this.#waiters.filter((w) => w.pred(m))) {
      this.#waiters = this.#waiters.filter((x) => x !== w);
      w.resolve(m);
    }
  }
}
