/**
 * Keeps a controller's external watch running. A watch mirrors state outside
 * the store (kernel uevents, rtnetlink); when its stream fails, the controller
 * falls back to periodic rescans, which is slow, so the watch is started again
 * after a capped exponential backoff instead of being lost until the next boot.
 * @module
 */
import { backoffDelay, type BackoffPolicy } from "./backoff.ts";
import type { Clock } from "./clock.ts";

/**
 * Delays between restarts of a failed watch: 1 s, doubling, at most 60 s, so a
 * stream that fails at once on every start costs one attempt a minute.
 */
export const WATCH_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000, factor: 2 };

/** A watch that ran this long before failing starts again from the shortest delay. */
export const WATCH_HEALTHY_MS = 60_000;

/** What {@link superviseWatch} needs. */
export interface WatchSupervision {
  /** The controller's watch. */
  readonly watch: (wake: () => void, signal: AbortSignal) => Promise<void>;
  readonly wake: () => void;
  /** Aborts when the runtime stops: the watch is not restarted after that. */
  readonly signal: AbortSignal;
  readonly clock: Clock;
  /** Called after each failure, before the delay: count it, log it. */
  readonly onFailure: (error: unknown, retryInMs: number) => void;
  /** @default WATCH_BACKOFF */
  readonly backoff?: BackoffPolicy;
}

/**
 * Runs `watch` until it returns or `signal` aborts, restarting it after each
 * failure (a watch that returns has nothing to watch: a disk controller without
 * uevents). Each failure also wakes the controller, so one reconcile catches up
 * on whatever the broken stream missed. Never rejects.
 */
export async function superviseWatch(s: WatchSupervision): Promise<void> {
  let consecutive = 0;
  while (!s.signal.aborted) {
    const started = s.clock.monotonic();
    let error: unknown;
    try {
      await s.watch(s.wake, s.signal);
      return;
    } catch (e) {
      error = e;
    }
    if (s.signal.aborted) return;
    if (s.clock.monotonic() - started >= WATCH_HEALTHY_MS) consecutive = 0;
    consecutive++;
    const delay = backoffDelay(consecutive, s.backoff ?? WATCH_BACKOFF);
    try {
      s.onFailure(error, delay);
    } catch {
      // A failing observer must not end the supervision.
    }
    s.wake();
    try {
      await s.clock.sleep(delay, s.signal);
    } catch {
      return; // aborted while waiting
    }
  }
}
