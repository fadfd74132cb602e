/**
 * A leading-and-trailing throttle for "something the server certificate
 * depends on changed": the first change after a quiet spell acts at once, the
 * changes that follow within the window are coalesced into one action at its
 * end, and no change is ever postponed by more than one window.
 *
 * Why not a debounce: a debounce waits for a quiet spell, so a boot's burst of
 * unrelated changes (the DHCP address, then an IPv6 address, its DAD flags,
 * the config persisted on STATE) kept pushing the certificate for the DHCP
 * address back, and the API answered at that address seconds later than it
 * could (issue 27); a steady stream of changes would postpone it forever.
 *
 * @module
 */

/** The timer functions a throttle uses (a fake clock in tests). */
export interface ThrottleTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const SYSTEM_TIMERS: ThrottleTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as number),
};

/** Runs `act` at most once per `windowMs`, first change at once, the rest at the window's end. */
export class ChangeThrottle {
  #window: unknown;
  #pending = false;
  #stopped = false;

  constructor(
    private readonly act: () => void,
    private readonly windowMs: number,
    private readonly timers: ThrottleTimers = SYSTEM_TIMERS,
  ) {}

  /** Something changed: act now when quiet, else once when the window ends. */
  changed(): void {
    if (this.#stopped) return;
    if (this.#window !== undefined) {
      this.#pending = true;
      return;
    }
    this.act();
    this.#open();
  }

  /** Whether an action waits for the window's end. */
  get pending(): boolean {
    return this.#pending;
  }

  /** No further actions, pending or not. */
  stop(): void {
    this.#stopped = true;
    this.#pending = false;
    if (this.#window !== undefined) this.timers.clearTimeout(this.#window);
    this.#window = undefined;
  }

  #open(): void {
    this.#window = this.timers.setTimeout(() => {
      this.#window = undefined;
      if (!this.#pending || this.#stopped) return;
      this.#pending = false;
      this.act();
      this.#open();
    }, this.windowMs);
  }
}
