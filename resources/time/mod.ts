/**
 * Time resource types (namespace `time`): the clock synchronisation status.
 *
 * @example
 * ```ts
 * import { TIME_STATUS, type TimeStatusSpec } from "./resources/time/mod.ts";
 * const healthy = (s: TimeStatusSpec) => s.disabled || s.synced;
 * console.log(TIME_STATUS, healthy);
 * ```
 * @module
 */
export * from "./time_status.ts";
