/**
 * The watchdog backend: the device that reboots the node when PID 1 stops
 * petting it. machined-init arms it before machined runs and hands the
 * descriptor over (`MACHINED_WATCHDOG_FD`); machined adopts it, sets the
 * running timeout and pets it from its event loop (watchdog/).
 * Every call is synchronous and on the JavaScript thread on purpose: a pet
 * that a stuck thread cannot make is the whole point.
 * @module
 */

/** What the driver says about itself. */
export interface WatchdogInfo {
  /** The driver's name: `Software Watchdog` (softdog), `i6300ESB timer`, … */
  readonly identity: string;
  /** The timeout in force, in seconds. */
  readonly timeoutS: number;
}

/** One armed watchdog. Once disarmed, every call throws (EBADF). */
export interface WatchdogDevice {
  /** The identity and timeout when adopted or opened. */
  readonly info: WatchdogInfo;
  /** Sets the timeout (which also pets it); returns the one the driver chose. */
  setTimeout(seconds: number): number;
  /** One pet. */
  keepalive(): void;
  /** The magic close: the timer stops and the device is closed. */
  disarm(): void;
}

/** Where a watchdog comes from. */
export interface WatchdogBackend {
  /**
   * The device machined-init armed, taken over (close-on-exec from now on,
   * so no service inherits it); `undefined` when there is none (dev mode, a
   * probe image, `machined.watchdog=off`). Only the first call returns it.
   */
  inherited(): WatchdogDevice | undefined;
  /** Opens (and so arms) a watchdog device such as `/dev/watchdog`. */
  open(path: string): WatchdogDevice;
}
