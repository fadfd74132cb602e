/**
 * Kernel resource types (namespace `kernel`): sysctls and modules from the
 * machine config, with what the kernel reports.
 *
 * @example
 * ```ts
 * import { KERNEL_PARAM_STATUS, type KernelParamStatusSpec } from "./resources/kernel/mod.ts";
 * const pending = (s: KernelParamStatusSpec) => !s.applied;
 * console.log(KERNEL_PARAM_STATUS, pending);
 * ```
 * @module
 */
export * from "./kernel_param_status.ts";
export * from "./kernel_module_status.ts";
export * from "./kernel_cmdline_status.ts";
