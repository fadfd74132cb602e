/**
 * NativeKmodBackend: finit_module and kexec_file_load through native-ops;
 * /proc/modules and /sys/module/<name>/parameters are read in TypeScript.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { KexecImage, KmodBackend, ModuleLoadResult } from "./backend.ts";
import { parseProcModules } from "./modules_dep.ts";

interface KmodNative {
  loadModule(path: string, params: string): Promise<ModuleLoadResult>;
  kexecLoad(kernel: string, initramfs: string | null, cmdline: string): Promise<void>;
  kexecUnload(): Promise<void>;
}

/** The kernel's module loader and kexec. */
export class NativeKmodBackend implements KmodBackend {
  readonly #native: KmodNative;
  readonly #procModules: string;
  readonly #sysModule: string;
  constructor(
    native: KmodNative = loadNative() as unknown as KmodNative,
    procModules = "/proc/modules",
    sysModule = "/sys/module",
  ) {
    this.#native = native;
    this.#procModules = procModules;
    this.#sysModule = sysModule;
  }
  loadModule(path: string, params = ""): Promise<ModuleLoadResult> {
    return this.#native.loadModule(path, params);
  }
  async loadedModules(): Promise<Set<string>> {
    try {
      const text = await Deno.readTextFile(this.#procModules);
      return new Set(parseProcModules(text).map((m) => m.name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return new Set(); // CONFIG_MODULES=n
      throw e;
    }
  }
  async moduleParameters(name: string, keys: readonly string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const key of keys) {
      // Names come from a validated config; refuse anything that could leave the directory.
      if (!/^[A-Za-z0-9_-]+$/.test(name) || !/^[A-Za-z0-9_-]+$/.test(key)) continue;
      const path = `${this.#sysModule}/${name}/parameters/${key}`;
      const text = await Deno.readTextFile(path).catch(() => undefined);
      if (text !== undefined) out[key] = text.replace(/\n$/, "");
    }
    return out;
  }
  kexecLoad(image: KexecImage): Promise<void> {
    return this.#native.kexecLoad(image.kernel, image.initramfs ?? null, image.cmdline);
  }
  kexecUnload(): Promise<void> {
    return this.#native.kexecUnload();
  }
}
