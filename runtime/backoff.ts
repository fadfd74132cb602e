/** Exponential backoff between failed reconciles, capped, reset after a success. */

/** Backoff tuning. */
export interface BackoffPolicy {
  /** Delay after the first failure. @default 100 */
  initialMs: number;
  /** Upper bound of the delay. @default 30000 */
  maxMs: number;
  /** Growth per consecutive failure. @default 2 */
  factor: number;
}

/** Defaults used by the controller runtime. */
export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 30_000, factor: 2 };

/** The delay before retry number `consecutiveFailures` (1 = first failure). */
export function backoffDelay(consecutiveFailures: number, policy: BackoffPolicy = DEFAULT_BACKOFF) {
  if (consecutiveFailures <= 0) return 0;
  const raw = policy.initialMs * Math.pow(policy.factor, consecutiveFailures - 1);
  return Math.min(policy.maxMs, raw);
}
