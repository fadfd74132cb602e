/**
 * The clock arithmetic of one SNTP exchange (RFC 5905 §8) and the decision
 * between stepping and slewing, as pure functions over Unix nanoseconds.
 * @module
 */

/** The four timestamps of an exchange, Unix nanoseconds. */
export interface ExchangeTimes {
  /** Client transmit (local clock). */
  t1: bigint;
  /** Server receive (server clock). */
  t2: bigint;
  /** Server transmit (server clock). */
  t3: bigint;
  /** Client receive (local clock). */
  t4: bigint;
}

/** What an exchange says about the local clock. */
export interface OffsetDelay {
  /** Server time minus local time: positive means the local clock is behind. */
  offsetNs: bigint;
  /** Round-trip network delay, never negative (clamped at 0 for clock jitter). */
  delayNs: bigint;
}

/**
 * θ = ((t2 − t1) + (t3 − t4)) / 2 and δ = (t4 − t1) − (t3 − t2). The division
 * rounds toward zero; a nanosecond is far below SNTP's accuracy.
 */
export function offsetAndDelay(t: ExchangeTimes): OffsetDelay {
  const offsetNs = ((t.t2 - t.t1) + (t.t3 - t.t4)) / 2n;
  const delay = (t.t4 - t.t1) - (t.t3 - t.t2);
  return { offsetNs, delayNs: delay < 0n ? 0n : delay };
}

/**
 * The kernel's PLL takes at most ±0.5 s per ADJ_OFFSET (MAXPHASE); larger
 * offsets must be stepped whatever the threshold says.
 */
export const MAX_SLEW_NS = 500_000_000n;

/** How to correct the clock for an offset. */
export type Correction = "step" | "slew";

/**
 * Step when |offset| exceeds `stepThresholdMs` (or the PLL's ±0.5 s limit),
 * slew otherwise: a step jumps wall time at once (what a node booted an hour
 * off needs), a slew keeps time monotonic for running workloads.
 * @throws RangeError for a negative threshold
 */
export function chooseCorrection(offsetNs: bigint, stepThresholdMs: number): Correction {
  if (!(stepThresholdMs >= 0)) throw new RangeError(`step threshold ${stepThresholdMs} ms < 0`);
  const abs = offsetNs < 0n ? -offsetNs : offsetNs;
  const threshold = BigInt(Math.round(stepThresholdMs * 1e6));
  return abs > threshold || abs > MAX_SLEW_NS ? "step" : "slew";
}

/** Nanoseconds → milliseconds, keeping sub-millisecond precision. */
export function nsToMs(ns: bigint): number {
  return Number(ns) / 1e6;
}
