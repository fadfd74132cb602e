/**
 * The kmod backend: load kernel modules (finit_module with parameters),
 * list loaded ones, and stage a kernel for kexec. Dependency resolution
 * lives in module_loader.ts on top of this; the fake keeps a set of loaded
 * modules and a staged kexec image.
 * @module
 */

/** `"already-loaded"` is the kernel's EEXIST, which counts as success. */
export type ModuleLoadResult = "loaded" | "already-loaded";

/** A kernel to boot with kexec. */
export interface KexecImage {
  kernel: string;
  initramfs?: string;
  cmdline: string;
}

/**
 * Kernel modules and kexec.
 *
 * Idempotence: `loadModule` of a loaded module resolves `"already-loaded"`;
 * `kexecLoad` replaces a staged image; `kexecUnload` with nothing staged succeeds.
 */
export interface KmodBackend {
  /**
   * finit_module(2) the file at `path` (compressed `.xz`/`.zst`/`.gz` is
   * decompressed by the kernel) with `params` such as `"max_loop=64"`.
   * @throws SysError ENOENT for a missing file or unknown symbols (a dependency not loaded)
   */
  loadModule(path: string, params?: string): Promise<ModuleLoadResult>;
  /** Names of loaded modules; empty when the kernel has no module support. */
  loadedModules(): Promise<Set<string>>;
  /**
   * The values the kernel shows for `keys` of module `name` (loaded or built in), from
   * /sys/module/<name>/parameters/<key>, trailing newline dropped. A key the module does not
   * show (unknown, or not readable: mode 0000 or 0200) is left out; a module that is not there
   * gives an empty record. Never throws for an absent or unreadable file.
   */
  moduleParameters(name: string, keys: readonly string[]): Promise<Record<string, string>>;
  /** Stage an image for a later kexec reboot; does not reboot. */
  kexecLoad(image: KexecImage): Promise<void>;
  kexecUnload(): Promise<void>;
}
