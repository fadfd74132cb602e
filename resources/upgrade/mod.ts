/**
 * Upgrade resource types: the A/B slots and the downgrade floor.
 *
 * @example
 * ```ts
 * import { UPGRADE_STATUS, type UpgradeStatusSpec } from "./resources/upgrade/mod.ts";
 * const bootedTrial = (s: UpgradeStatusSpec) =>
 *   s.slots.some((x) => x.booted && x.state === "trial");
 * console.log(UPGRADE_STATUS, bootedTrial);
 * ```
 * @module
 */
export * from "./upgrade_status.ts";
