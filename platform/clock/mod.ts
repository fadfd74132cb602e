/**
 * Kernel clocks and the NTP discipline: read clocks, step the wall clock,
 * slew with adjtimex. {@link NativeClockBackend} is the kernel's;
 * {@link FakeClockBackend} keeps time in memory.
 *
 * @example
 * ```ts
 * import { NativeClockBackend, STA } from "./platform/clock/mod.ts";
 * const clock = new NativeClockBackend();
 * console.log(clock.read("boottime"), clock.adjust().state);
 * clock.adjust({ status: STA.PLL, offsetNs: 2_000_000 }); // slew +2 ms
 * ```
 * @module
 */
export {
  type AdjtimexRequest,
  type ClockBackend,
  type ClockId,
  type ClockReading,
  type NtpState,
  STA,
  toNanoseconds,
} from "./backend.ts";
export { NativeClockBackend } from "./backend_native.ts";
export { FakeClockBackend } from "./backend_fake.ts";
export { clockBackendConformance } from "./backend_conformance.ts";
