/**
 * Kernel modules and kexec: load modules with their dependencies (modules.dep
 * resolution in TypeScript), recognise built-in and loaded ones, and stage a
 * kernel for kexec. {@link NativeKmodBackend} talks to the kernel;
 * {@link FakeKmodBackend} simulates it.
 *
 * @example
 * ```ts
 * import { loadModuleTree, NativeKmodBackend, readModuleIndex } from "./platform/kmod/mod.ts";
 * const result = await loadModuleTree(new NativeKmodBackend(), await readModuleIndex(), "virtio_net");
 * console.log(result.loaded, result.skipped);
 * ```
 * @module
 */
export type { KexecImage, KmodBackend, ModuleLoadResult } from "./backend.ts";
export { NativeKmodBackend } from "./backend_native.ts";
export { FakeKmodBackend } from "./backend_fake.ts";
export { kmodBackendConformance } from "./backend_conformance.ts";
export {
  loadModuleTree,
  type ModuleIndex,
  type ModuleTreeResult,
  readModuleIndex,
} from "./module_loader.ts";
export {
  type LoadedModule,
  type ModuleEntry,
  moduleName,
  type ModulesDep,
  parseModulesBuiltin,
  parseModulesDep,
  parseProcModules,
  resolveLoadOrder,
} from "./modules_dep.ts";
