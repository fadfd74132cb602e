/**
 * Time synchronisation: an SNTP client (RFC 4330) that steps or slews the
 * wall clock from the servers of `machine.time` and publishes TimeStatus.
 * The UDP exchange sits behind {@link NtpTransport}: {@link UdpNtpTransport}
 * in production, {@link FakeNtpTransport} in tests, and
 * {@link startSntpResponder} is a real SNTP server for loopback tests.
 *
 * @example
 * ```ts
 * import { timeControllers, UdpNtpTransport } from "./controllers/time/mod.ts";
 * import { NativeClockBackend } from "./platform/clock/mod.ts";
 * const controllers = timeControllers({
 *   clock: new NativeClockBackend(),
 *   transport: new UdpNtpTransport(),
 * });
 * console.log(controllers.map((c) => c.name)); // ["time.TimeSyncController"]
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import { timeSyncController, type TimeSyncDeps } from "./time_sync.ts";

/** The time domain's controllers. */
export function timeControllers(deps: TimeSyncDeps): MachineController[] {
  return [timeSyncController(deps)];
}

export { TimeSyncController, timeSyncController, type TimeSyncDeps } from "./time_sync.ts";
export {
  dnsResolver,
  type HostResolver,
  type NtpExchangeOptions,
  type NtpTransport,
} from "./ntp_transport.ts";
export { UdpNtpTransport } from "./ntp_transport_udp.ts";
export {
  type FakeExchange,
  FakeNtpTransport,
  type FakeServerBehaviour,
} from "./ntp_transport_fake.ts";
export {
  type ResponderBehaviour,
  type ResponderOptions,
  type SntpResponder,
  startSntpResponder,
} from "./sntp_responder.ts";
export {
  querySntp,
  type SntpClientDeps,
  type SntpQueryOptions,
  type SntpSample,
} from "./sntp_client.ts";
export {
  SntpError,
  SntpKissOfDeathError,
  SntpReplyError,
  SntpResolveError,
  SntpTimeoutError,
  SntpTransportError,
} from "./sntp_error.ts";
export { chooseCorrection, type Correction, offsetAndDelay } from "./sntp_math.ts";
