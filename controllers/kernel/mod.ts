/**
 * Kernel tuning from the machine config: sysctls written under /proc/sys
 * (defaults restored when a key leaves the config) and kernel modules loaded
 * with their dependencies and parameters. Sysctls sit behind
 * {@link SysctlBackend} ({@link ProcSysctlBackend}, {@link FakeSysctlBackend});
 * modules go through platform/kmod.
 *
 * @example
 * ```ts
 * import { kernelControllers, ProcSysctlBackend } from "./controllers/kernel/mod.ts";
 * import { NativeKmodBackend } from "./platform/kmod/mod.ts";
 * const controllers = kernelControllers({
 *   sysctls: new ProcSysctlBackend(),
 *   kmod: new NativeKmodBackend(),
 * });
 * console.log(controllers.map((c) => c.name));
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import type { KmodBackend, ModuleIndex } from "../../platform/kmod/mod.ts";
import type { SysctlBackend } from "./sysctl_backend.ts";
import { sysctlController } from "./sysctl_controller.ts";
import { moduleController } from "./module_controller.ts";
import type { ProcBackend } from "../../platform/procfs/mod.ts";
import type { BootCmdlineBackend } from "./boot_cmdline_backend.ts";
import { cmdlineController } from "./cmdline_controller.ts";

/** What the kernel domain needs. */
export interface KernelDeps {
  sysctls: SysctlBackend;
  kmod: KmodBackend;
  /** The module index. @default readModuleIndex() of the running kernel */
  moduleIndex?: () => Promise<ModuleIndex>;
  events?: EventBus;
  /**
   * Where the booted slot's next command line lives, and /proc for the booted one: with both,
   * KernelCmdlineController writes machine.kernel.args and publishes KernelCmdlineStatus.
   */
  cmdline?: { proc: ProcBackend; boot: BootCmdlineBackend };
}

/** The kernel domain's controllers: modules first, so sysctls they add can follow. */
export function kernelControllers(deps: KernelDeps): MachineController[] {
  return [
    moduleController({ backend: deps.kmod, index: deps.moduleIndex, events: deps.events }),
    sysctlController({ backend: deps.sysctls, events: deps.events }),
    ...(deps.cmdline ? [cmdlineController({ ...deps.cmdline, events: deps.events })] : []),
  ];
}

export {
  isUnknownSysctl,
  normalizeSysctlValue,
  type SysctlBackend,
  SysctlError,
  sysctlPath,
} from "./sysctl_backend.ts";
export { ProcSysctlBackend } from "./sysctl_backend_proc.ts";
export { FakeSysctlBackend } from "./sysctl_backend_fake.ts";
export { sysctlBackendConformance, type SysctlTarget } from "./sysctl_backend_conformance.ts";
export {
  SysctlController,
  sysctlController,
  type SysctlControllerDeps,
} from "./sysctl_controller.ts";
export {
  KEPT_LOADED,
  ModuleController,
  moduleController,
  type ModuleControllerDeps,
} from "./module_controller.ts";
export { type BootCmdlineBackend, type NextBoot } from "./boot_cmdline_backend.ts";
export { FakeBootCmdlineBackend } from "./boot_cmdline_backend_fake.ts";
export {
  CMDLINE_RETRY_MS,
  cmdlineController,
  type CmdlineControllerDeps,
  cmdlineStatus,
  KernelCmdlineController,
} from "./cmdline_controller.ts";
