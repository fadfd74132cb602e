/**
 * Rates from two samples without sleeping in an RPC: the sampler keeps the
 * last samples it took (on demand, at most one kept per `minIntervalMs`) and
 * answers each call against the newest kept sample at least that old, so two
 * clients polling at once (a dashboard, a scraper) both see a rate over a
 * sensible interval and neither resets the other's.
 * @module
 */

/** One sample and when (monotonic ms) it was taken. */
export interface Sample<T> {
  readonly at: number;
  readonly value: T;
}

/** Keeps up to two samples of T. */
export class Sampler<T> {
  #kept: Sample<T>[] = [];

  /**
   * @param minIntervalMs the shortest interval a rate is computed over, once there is history.
   * @param now the monotonic clock. @default performance.now
   */
  constructor(
    readonly minIntervalMs = 1000,
    readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Records `value` as taken now and returns the sample to compare it with
   * (undefined on the first call).
   */
  observe(value: T): Sample<T> | undefined {
    const at = this.now();
    const aged = this.#kept.filter((s) => at - s.at >= this.minIntervalMs);
    const base = aged.at(-1) ?? this.#kept[0];
    const newest = this.#kept.at(-1);
    if (!newest || at - newest.at >= this.minIntervalMs) {
      this.#kept = [...this.#kept, { at, value }].slice(-2);
    }
    return base;
  }
}
