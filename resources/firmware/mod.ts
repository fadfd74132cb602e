/**
 * Firmware resource types: the node's boot trust state.
 *
 * @example
 * ```ts
 * import { SECURE_BOOT_STATUS, type SecureBootStatusSpec } from "./resources/firmware/mod.ts";
 * const enforced = (s: SecureBootStatusSpec) => s.secureBoot === "on" && s.setupMode === "off";
 * console.log(SECURE_BOOT_STATUS, enforced);
 * ```
 * @module
 */
export * from "./secure_boot_status.ts";
