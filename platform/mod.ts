/**
 * What platform/'s rooms share: the fault injector their fakes fail through. Each
 * privileged surface is a room of its own (platform/mount, platform/network, …) with its
 * `mod.ts`; the test namespaces (`rerunInNamespace`) are test support, in
 * platform/testing.ts.
 *
 * @example
 * ```ts
 * import { FaultInjector } from "./platform/mod.ts";
 * const faults = new FaultInjector();
 * ```
 * @module
 */
export { FaultInjector } from "./fault.ts";
