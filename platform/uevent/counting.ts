/**
 * Totals of every subscription a backend opened, for the metrics endpoint: a
 * subscription's own counters die with it (a watch that failed and was
 * restarted opens a new one), while an operator wants a counter that only
 * grows. Wraps any {@link UeventBackend}.
 * @module
 */
import type { UeventBackend, UeventBatch, UeventCounters, UeventSubscription } from "./backend.ts";

const ZERO: UeventCounters = { received: 0, dropped: 0, rejected: 0, foreign: 0 };

function add(a: UeventCounters, b: UeventCounters): UeventCounters {
  return {
    received: a.received + b.received,
    dropped: a.dropped + b.dropped,
    rejected: a.rejected + b.rejected,
    foreign: a.foreign + b.foreign,
  };
}

/** A {@link UeventBackend} that also counts, across all its subscriptions, open or closed. */
export class CountingUeventBackend implements UeventBackend {
  readonly #inner: UeventBackend;
  readonly #open = new Set<UeventSubscription>();
  #closed: UeventCounters = ZERO;
  #subscriptions = 0;

  constructor(inner: UeventBackend) {
    this.#inner = inner;
  }

  subscribe(options?: { capacity?: number }): UeventSubscription {
    const sub = this.#inner.subscribe(options);
    this.#subscriptions++;
    this.#open.add(sub);
    const retire = () => {
      if (!this.#open.delete(sub)) return;
      this.#closed = add(this.#closed, sub.counters());
    };
    return {
      next: (timeoutMs: number): Promise<UeventBatch | undefined> => sub.next(timeoutMs),
      counters: () => sub.counters(),
      close: () => {
        retire();
        sub.close();
      },
    };
  }

  /** Every subscription's counters added up, since the backend was made. */
  totals(): UeventCounters {
    let sum = this.#closed;
    for (const s of this.#open) sum = add(sum, s.counters());
    return sum;
  }

  /** Subscriptions opened since the backend was made (more than one: a stream was restarted). */
  get subscriptions(): number {
    return this.#subscriptions;
  }
}
