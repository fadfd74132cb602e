/**
 * NativeClockBackend: clock_gettime/clock_settime/adjtimex through native-ops.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { AdjtimexRequest, ClockBackend, ClockId, ClockReading, NtpState } from "./backend.ts";

interface ClockNative {
  clockGetTime(clock: string): ClockReading;
  clockSetTime(clock: string, sec: number, nsec: number): Promise<void>;
  adjtimex(req: AdjtimexRequest): NtpState;
}

/** The kernel's clocks. */
export class NativeClockBackend implements ClockBackend {
  readonly #native: ClockNative;
  constructor(native: ClockNative = loadNative() as unknown as ClockNative) {
    this.#native = native;
  }
  read(clock: ClockId): ClockReading {
    return this.#native.clockGetTime(clock);
  }
  setRealtime(to: ClockReading): Promise<void> {
    return this.#native.clockSetTime("realtime", to.sec, to.nsec);
  }
  adjust(req: AdjtimexRequest = {}): NtpState {
    return this.#native.adjtimex(req);
  }
}
