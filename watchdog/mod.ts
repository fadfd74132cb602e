/**
 * The node's watchdog: {@link withNodeWatchdog} adopts the device machined-init
 * armed and pets it from the event loop ({@link WatchdogPetter}); the test
 * hook that hangs machined lives in test_hang.ts. docs/upgrade.md.
 * @module
 */
export {
  disarmingPower,
  type NodeWatchdogDeps,
  watchdogTimeoutS,
  withNodeWatchdog,
} from "./node_watchdog.ts";
export {
  DEFAULT_WATCHDOG_TIMEOUT_S,
  PETS_PER_TIMEOUT,
  type PetterState,
  WatchdogPetter,
} from "./petter.ts";
export { HANG_WORD, hangAfterS, isTestImage, TEST_HOOKS_MARKER } from "./test_hang.ts";
