/**
 * The node's watchdog, wired: adopt the device machined-init armed, set the
 * running timeout from the command line (`machined.watchdog=SECONDS`,
 * default {@link DEFAULT_WATCHDOG_TIMEOUT_S}; `off` disables it), pet it from
 * the event loop, and disarm it only as the power backend is asked to
 * reboot, power off, halt or kexec. Armed on every boot, trial or not: a
 * hang in a blessed slot reboots into the same slot, a hang in a trial
 * costs it a boot try. See docs/upgrade.md and docs/decisions.md.
 * @module
 */
import type { Logger } from "../logs/mod.ts";
import type { PowerBackend } from "../platform/power/mod.ts";
import { NativeWatchdogBackend, type WatchdogBackend } from "../platform/watchdog/mod.ts";
import { parseCmdline } from "../layout/mod.ts";
import { DEFAULT_WATCHDOG_TIMEOUT_S, WatchdogPetter } from "./petter.ts";
import { hangAfterS, isTestImage, scheduleHang } from "./test_hang.ts";

/** The running timeout the command line asks for; `undefined` for off. Pure. */
export function watchdogTimeoutS(cmdline: Map<string, string>): number | undefined {
  const raw = cmdline.get("machined.watchdog");
  if (raw === undefined) return DEFAULT_WATCHDOG_TIMEOUT_S;
  if (["off", "0", "false", "no"].includes(raw)) return undefined;
  const s = Number(raw);
  return Number.isInteger(s) && s > 0 ? s : DEFAULT_WATCHDOG_TIMEOUT_S;
}

/** A power backend that disarms the watchdog right before the kernel is asked to end. */
export function disarmingPower(power: PowerBackend, petter: WatchdogPetter): PowerBackend {
  const last = (end: () => Promise<void>) => () => {
    petter.disarm();
    return end();
  };
  return {
    sync: () => power.sync(),
    restart: last(() => power.restart()),
    powerOff: last(() => power.powerOff()),
    halt: last(() => power.halt()),
    kexec: last(() => power.kexec()),
    setCtrlAltDel: (m) => power.setCtrlAltDel(m),
  };
}

/** What {@link withNodeWatchdog} reads (tests pass fakes). */
export interface NodeWatchdogDeps {
  backend?: WatchdogBackend;
  cmdline?: Map<string, string>;
  testImage?: boolean;
}

/**
 * Starts petting the inherited watchdog, if any, and returns the backends
 * with a power backend that disarms it last; without one (dev mode, a probe
 * image, `machined.watchdog=off`) the backends come back unchanged.
 */
export function withNodeWatchdog<B extends { power: PowerBackend }>(
  backends: B,
  logger: Logger,
  deps: NodeWatchdogDeps = {},
): B {
  let device;
  try {
    device = (deps.backend ?? new NativeWatchdogBackend()).inherited();
  } catch (e) {
    logger.error("watchdog", "cannot take over the watchdog machined-init armed", { error: e });
    return backends;
  }
  if (!device) return backends;
  try {
    const cmdline = deps.cmdline ?? readCmdline();
    const timeoutS = watchdogTimeoutS(cmdline);
    if (timeoutS === undefined) {
      device.disarm();
      logger.info("watchdog", "off (machined.watchdog=off): disarmed");
      return backends;
    }
    const petter = new WatchdogPetter({ device, timeoutS, logger });
    petter.start();
    const hang = hangAfterS(cmdline, deps.testImage ?? isTestImage(), logger);
    if (hang !== undefined) scheduleHang(hang, logger);
    return { ...backends, power: disarmingPower(backends.power, petter) };
  } catch (e) {
    // A watchdog machined cannot run is disarmed, never left to reboot a healthy node in a loop.
    logger.error("watchdog", "cannot run the watchdog; disarming it", { error: e });
    try {
      device.disarm();
    } catch { /* nothing more to do */ }
    return backends;
  }
}

function readCmdline(): Map<string, string> {
  try {
    return parseCmdline(Deno.readTextFileSync("/proc/cmdline"));
  } catch {
    return new Map();
  }
}
