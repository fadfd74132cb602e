/**
 * WallClockFake: a fake clock backend whose wall clock follows the real one
 * plus a shift, for tests against real NTP servers (the TS responder,
 * chrony) where time must pass for real. Steps and PLL slews change the
 * shift, never the host's clock; every call is recorded by the fake's
 * FaultInjector like any other fake.
 * @module
 */
import {
  type AdjtimexRequest,
  type ClockId,
  type ClockReading,
  FakeClockBackend,
  type NtpState,
  STA,
  toNanoseconds,
} from "../../platform/clock/mod.ts";

/** A fake clock that runs in real time, `shiftMs` off the host's. */
export class WallClockFake extends FakeClockBackend {
  constructor(public shiftMs = 0) {
    super();
  }

  override read(clock: ClockId): ClockReading {
    if (clock !== "realtime") return super.read(clock);
    this.faults.check("clock_gettime", [clock]);
    const ns = BigInt(Math.round((Date.now() + this.shiftMs) * 1000)) * 1000n;
    return { sec: Number(ns / 1_000_000_000n), nsec: Number(ns % 1_000_000_000n) };
  }

  override async setRealtime(to: ClockReading): Promise<void> {
    await super.setRealtime(to);
    this.shiftMs = Number(toNanoseconds(to)) / 1e6 - Date.now();
  }

  override adjust(req: AdjtimexRequest = {}): NtpState {
    const state = super.adjust(req);
    if (req.offsetNs !== undefined && state.status & STA.PLL) this.shiftMs += req.offsetNs / 1e6;
    if (req.singleshotUs !== undefined) this.shiftMs += req.singleshotUs / 1000;
    return state;
  }
}
