/**
 * The clock backend: read REALTIME/MONOTONIC/BOOTTIME, step the wall clock,
 * and drive the kernel's NTP discipline through adjtimex (slew by an offset,
 * set the status word). The time-sync controller uses it; the fake keeps
 * clocks and NTP state in memory.
 * @module
 */

/** A kernel clock. */
export type ClockId = "realtime" | "monotonic" | "boottime";

/** A clock reading. */
export interface ClockReading {
  sec: number;
  nsec: number;
}

/** adjtimex status bits (STA_*). */
export const STA = {
  PLL: 0x0001,
  PPSFREQ: 0x0002,
  PPSTIME: 0x0004,
  FLL: 0x0008,
  INS: 0x0010,
  DEL: 0x0020,
  UNSYNC: 0x0040,
  FREQHOLD: 0x0080,
  NANO: 0x2000,
} as const;

/** What to change; all fields absent reads the state only. */
export interface AdjtimexRequest {
  /** PLL offset to slew out, in nanoseconds (ADJ_OFFSET | ADJ_NANO; needs STA_PLL). */
  offsetNs?: number;
  /** One-shot slew in microseconds (ADJ_OFFSET_SINGLESHOT, like adjtime(3)). */
  singleshotUs?: number;
  /** Frequency offset in scaled ppm (ppm × 65536). */
  frequency?: number;
  maxErrorUs?: number;
  estErrorUs?: number;
  /** The whole STA_* status word; 0 clears STA_UNSYNC (clock synchronised). */
  status?: number;
  timeConstant?: number;
  tick?: number;
}

/** The kernel's NTP state (adjtimex(2) fields). */
export interface NtpState {
  /** TIME_OK (0) … TIME_ERROR (5, clock not synchronised). */
  state: number;
  offset: number;
  frequency: number;
  maxErrorUs: number;
  estErrorUs: number;
  status: number;
  timeConstant: number;
  precisionUs: number;
  tolerance: number;
  timeSec: number;
  /** Microseconds, or nanoseconds when `status` has STA_NANO. */
  timeFrac: number;
  tick: number;
  tai: number;
}

/**
 * Kernel clocks.
 *
 * Idempotence: reads are pure; `setRealtime` steps the clock every call;
 * `adjust` with the same request re-applies it (an offset starts a new slew).
 */
export interface ClockBackend {
  /** @throws SysError EINVAL for an unknown clock. */
  read(clock: ClockId): ClockReading;
  /** Step the wall clock. @throws SysError EPERM without CAP_SYS_TIME. */
  setRealtime(to: ClockReading): Promise<void>;
  /**
   * adjtimex(2): apply `req` and return the resulting state.
   * @throws SysError EINVAL for `offsetNs` together with `singleshotUs`.
   */
  adjust(req?: AdjtimexRequest): NtpState;
}

/** A reading as nanoseconds (exact, as a bigint). */
export function toNanoseconds(r: ClockReading): bigint {
  return BigInt(r.sec) * 1_000_000_000n + BigInt(r.nsec);
}
