/**
 * The watchdog: the device that reboots a node whose PID 1 stops petting it.
 * {@link NativeWatchdogBackend} adopts the one machined-init armed;
 * {@link FakeWatchdogBackend} runs on a fake clock and fires like softdog.
 *
 * @example
 * ```ts
 * import { NativeWatchdogBackend } from "./platform/watchdog/mod.ts";
 * const dog = new NativeWatchdogBackend().inherited(); // undefined in dev mode
 * dog?.setTimeout(60);
 * dog?.keepalive();
 * ```
 * @module
 */
export type { WatchdogBackend, WatchdogDevice, WatchdogInfo } from "./backend.ts";
export { NativeWatchdogBackend, WATCHDOG_FD_ENV } from "./backend_native.ts";
export { FakeWatchdog, FakeWatchdogBackend, type FakeWatchdogState } from "./backend_fake.ts";
