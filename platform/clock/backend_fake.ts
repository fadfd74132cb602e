/**
 * FakeClockBackend: kernel clocks and NTP state in memory. Tests move time
 * with {@link FakeClockBackend.advance}; steps and slews are recorded, and a
 * PLL/one-shot offset is applied to the wall clock at once (the real kernel
 * slews it out gradually; the outcome is the same).
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import {
  type AdjtimexRequest,
  type ClockBackend,
  type ClockId,
  type ClockReading,
  type NtpState,
  STA,
} from "./backend.ts";

const NS = 1_000_000_000n;

function reading(ns: bigint): ClockReading {
  return { sec: Number(ns / NS), nsec: Number(ns % NS) };
}

/** The in-memory clock backend. */
export class FakeClockBackend implements ClockBackend {
  readonly faults = new FaultInjector();
  #realtime: bigint;
  #monotonic = 1_000n * NS;
  #suspended = 0n;
  /** The NTP state; starts unsynchronised like a fresh kernel. */
  ntp: NtpState = {
    state: 5,
    offset: 0,
    frequency: 0,
    maxErrorUs: 16_000_000,
    estErrorUs: 16_000_000,
    status: STA.UNSYNC,
    timeConstant: 2,
    precisionUs: 1,
    tolerance: 32_768_000,
    timeSec: 0,
    timeFrac: 0,
    tick: 10_000,
    tai: 0,
  };

  constructor(realtimeMs = Date.now()) {
    this.#realtime = BigInt(Math.round(realtimeMs)) * 1_000_000n;
  }

  /** Let `ms` pass on every clock (with `suspended`, only REALTIME and BOOTTIME move). */
  advance(ms: number, options: { suspended?: boolean } = {}): void {
    const ns = BigInt(Math.round(ms * 1e6));
    this.#realtime += ns;
    if (options.suspended) this.#suspended += ns;
    else this.#monotonic += ns;
  }

  read(clock: ClockId): ClockReading {
    this.faults.check("clock_gettime", [clock]);
    switch (clock) {
      case "realtime":
        return reading(this.#realtime);
      case "monotonic":
        return reading(this.#monotonic);
      case "boottime":
        return reading(this.#monotonic + this.#suspended);
      default:
        throw new SysError("clock_gettime", errnoValue("EINVAL"), String(clock));
    }
  }

  setRealtime(to: ClockReading): Promise<void> {
    try {
      this.faults.check("clock_settime", [to]);
      if (to.nsec < 0 || to.nsec >= 1e9) {
        throw new SysError("clock_settime", errnoValue("EINVAL"), `${to.sec}.${to.nsec}`);
      }
      this.#realtime = BigInt(to.sec) * NS + BigInt(to.nsec);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  adjust(req: AdjtimexRequest = {}): NtpState {
    this.faults.check("adjtimex", [req]);
    if (req.offsetNs !== undefined && req.singleshotUs !== undefined) {
      throw new SysError("adjtimex", errnoValue("EINVAL"), "offset and singleshot are exclusive");
    }
    const n = { ...this.ntp };
    if (req.status !== undefined) n.status = req.status;
    if (req.offsetNs !== undefined) {
      n.status |= STA.NANO;
      n.offset = req.offsetNs;
      if (n.status & STA.PLL) this.#realtime += BigInt(Math.round(req.offsetNs));
    }
    if (req.singleshotUs !== undefined) this.#realtime += BigInt(req.singleshotUs) * 1000n;
    if (req.frequency !== undefined) n.frequency = req.frequency;
    if (req.maxErrorUs !== undefined) n.maxErrorUs = req.maxErrorUs;
    if (req.estErrorUs !== undefined) n.estErrorUs = req.estErrorUs;
    if (req.timeConstant !== undefined) n.timeConstant = req.timeConstant;
    if (req.tick !== undefined) n.tick = req.tick;
    n.state = n.status & STA.UNSYNC ? 5 : 0;
    const now = this.read("realtime");
    n.timeSec = now.sec;
    n.timeFrac = n.status & STA.NANO ? now.nsec : Math.floor(now.nsec / 1000);
    this.ntp = n;
    return { ...n };
  }
}
