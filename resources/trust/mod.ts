/**
 * Trust resource types: the CA bundle the node writes from `machine.trusted_roots`.
 *
 * @example
 * ```ts
 * import { TRUSTED_ROOTS_STATUS, type TrustedRootsStatusSpec } from "./resources/trust/mod.ts";
 * const names = (s: TrustedRootsStatusSpec) => s.roots.map((r) => r.name);
 * console.log(TRUSTED_ROOTS_STATUS, names);
 * ```
 * @module
 */
export * from "./trusted_roots_status.ts";
