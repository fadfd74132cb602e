/**
 * System extension resource types: what machined-init verified and mounted from the booted
 * slot's root image.
 *
 * @example
 * ```ts
 * import { EXTENSION_STATUS, type ExtensionStatusSpec } from "./resources/extensions/mod.ts";
 * const mounted = (s: ExtensionStatusSpec) => s.state === "mounted";
 * console.log(EXTENSION_STATUS, mounted);
 * ```
 * @module
 */
export * from "./extension_status.ts";
