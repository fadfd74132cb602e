/**
 * machined's closed catalog of resource types: one file per type (spec type,
 * type name, descriptor), closed by the registry. The API and the CLI import
 * this folder, never controllers/.
 *
 * @example
 * ```ts
 * import { resolveResourceType, RESOURCE_DESCRIPTORS } from "./resources/mod.ts";
 * const type = resolveResourceType("ms"); // "MachineStatus"
 * console.log(RESOURCE_DESCRIPTORS[type!].namespace); // "runtime"
 * ```
 * @module
 */
export * from "./descriptor.ts";
export * from "./registry.ts";
export * from "./config/machine_config.ts";
export * from "./config/config_status.ts";
export * from "./services/machine_status.ts";
export * from "./services/controller_status.ts";
export * from "./network/mod.ts";
export * from "./block/mod.ts";
export * from "./services/service_spec.ts";
export * from "./services/service_status.ts";
export * from "./services/runtime_status.ts";
export * from "./time/mod.ts";
export * from "./kernel/mod.ts";
export * from "./upgrade/mod.ts";
export * from "./firmware/mod.ts";
export * from "./trust/mod.ts";
export * from "./extensions/mod.ts";
