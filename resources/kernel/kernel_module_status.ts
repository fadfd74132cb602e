/**
 * KernelModuleStatus: one module from `machine.kernel.modules`: whether it is
 * loaded (by machined, built in, or already there), what it needed, and why
 * it failed. Modules are never unloaded; one removed from the config keeps
 * its status with `configured: false` and says "kept loaded". The id is the
 * module name, normalised (dashes as underscores).
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const KERNEL_MODULE_STATUS = "KernelModuleStatus";

/**
 * `loaded` by machined; `builtin` into the kernel; `already-loaded` before
 * machined asked (its parameters were not applied); `failed` to load.
 */
export type KernelModuleState = "loaded" | "builtin" | "already-loaded" | "failed";

export interface KernelModuleStatusSpec {
  /** Normalised module name. */
  readonly name: string;
  readonly state: KernelModuleState;
  /** The parameters it was loaded with (or asked for, when failed). */
  readonly parameters: readonly string[];
  /**
   * The configured parameters as the kernel shows them now (/sys/module/<name>/parameters),
   * `key=value`, in config order; a key the kernel does not show (unknown or not readable)
   * is left out. The kernel may print a value its own way (`Y` for `1`).
   */
  readonly inForce: readonly string[];
  /** Every module it depends on, in load order (from modules.dep). */
  readonly dependencies: readonly string[];
  /** The dependencies machined loaded for it (the rest were built in or already loaded). */
  readonly loadedDependencies: readonly string[];
  /** Still listed in `machine.kernel.modules`. */
  readonly configured: boolean;
  /** Why it failed; empty otherwise. */
  readonly error: string;
  /** A note such as `removed from config; kept loaded`; empty when nothing to say. */
  readonly message: string;
}

export const kernelModuleStatusDescriptor: ResourceDescriptor<
  typeof KERNEL_MODULE_STATUS,
  KernelModuleStatusSpec
> = {
  type: KERNEL_MODULE_STATUS,
  namespace: "kernel",
  aliases: ["kernelmodulestatus", "kernelmodulestatuses", "modules", "module", "kms"],
  description: "A kernel module from the machine config: load state, dependencies, error",
  columns: [
    { header: "STATE", value: (s) => s.state },
    { header: "PARAMETERS", value: (s) => s.parameters.join(" ") },
    { header: "IN FORCE", value: (s) => s.inForce.join(" ") },
    { header: "DEPENDENCIES", value: (s) => s.dependencies.join(",") },
    { header: "ERROR", value: (s) => s.error || s.message },
  ],
};
