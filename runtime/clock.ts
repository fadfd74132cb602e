/**
 * Time as a dependency, so backoff, resync and timers are testable without
 * sleeping. Production uses {@link systemClock}; tests use {@link FakeClock}.
 */

/** Wall time, monotonic time and cancellable sleeps. */
export interface Clock {
  /** Milliseconds since the epoch: for timestamps, never for durations (it jumps when stepped). */
  now(): number;
  /**
   * Milliseconds on a clock that never jumps (arbitrary origin): durations and
   * deadlines are differences of this, so an SNTP step cannot bend them.
   */
  monotonic(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock, backed by `Date.now`, `performance.now` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal!.reason);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, ms));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

interface Sleeper {
  at: number;
  seq: number;
  resolve: () => void;
}

/**
 * A manual clock: sleeps resolve only when the test advances time past them.
 * `advance` yields to the microtask queue between wake-ups so woken code runs in order.
 */
export class FakeClock implements Clock {
  #now: number;
  #wallOffset = 0;
  #seq = 0;
  #sleepers: Sleeper[] = [];
  #waiters: Array<() => void> = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now + this.#wallOffset;
  }

  /** Moves with {@link advance}; unlike `now()`, never with {@link stepWall}. */
  monotonic(): number {
    return this.#now;
  }

  /** Steps the wall clock by `ms` (as SNTP does), leaving monotonic time and sleeps alone. */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  /** How many sleeps are pending (tests wait for code to reach a sleep). */
  get pendingSleeps(): number {
    return this.#sleepers.length;
  }

  /** The wake-up times of pending sleeps, relative to now. */
  pendingDelays(): number[] {
    return this.#sleepers.map((s) => s.at - this.#now).sort((a, b) => a - b);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#sleepers.push(sleeper);
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  /** Resolves once at least `count` sleeps are pending. */
  async waitForSleepers(count = 1, timeoutMs = 5000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (this.#sleepers.length < count) {
      if (performance.now() > deadline) {
        throw new Error(`Timed out waiting for ${count} pending sleeps`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 5);
        this.#waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Move time forward by `ms`, waking every sleep that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#sleepers
        .filter((s) => s.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#sleepers = this.#sleepers.filter((s) => s !== due);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
      for (let i = 0; i < 10; i++) await Promise.resolve();
    }
    this.#now = target;
    for (let i = 0; i < 10; i++) await Promise.resolve();
  }
}
