/**
 * FakeKmodBackend: module files that exist, their dependencies, the loaded
 * set, and a staged kexec image. Like the kernel, loading a module whose
 * dependencies are not loaded fails with ENOENT (unknown symbols), and
 * loading a loaded one is EEXIST, reported as `"already-loaded"`.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import type { KexecImage, KmodBackend, ModuleLoadResult } from "./backend.ts";
import { moduleName } from "./modules_dep.ts";

function sysError(op: string, code: string, detail: string): SysError {
  return new SysError(op, errnoValue(code), detail);
}

/** The in-memory kmod backend. */
export class FakeKmodBackend implements KmodBackend {
  readonly faults = new FaultInjector();
  /** Loaded module names and the parameters they were loaded with. */
  readonly loaded = new Map<string, string>();
  /** The staged kexec image, if any. */
  staged: KexecImage | null = null;
  #files = new Map<string, string[]>();

  /** A module file that exists at `path` and needs `deps` (module names) loaded first. */
  addModuleFile(path: string, deps: string[] = []): this {
    this.#files.set(path, deps.map(moduleName));
    return this;
  }

  /** A plain file that exists (e.g. a kernel image for kexec). */
  addFile(path: string): this {
    this.#files.set(path, []);
    return this;
  }

  loadModule(path: string, params = ""): Promise<ModuleLoadResult> {
    try {
      this.faults.check("finit_module", [path, params]);
      const deps = this.#files.get(path);
      if (!deps) throw sysError("finit_module", "ENOENT", path);
      const name = moduleName(path);
      if (this.loaded.has(name)) return Promise.resolve("already-loaded");
      if (deps.some((d) => !this.loaded.has(d))) throw sysError("finit_module", "ENOENT", path);
      this.loaded.set(name, params);
      return Promise.resolve("loaded");
    } catch (e) {
      return Promise.reject(e);
    }
  }

  loadedModules(): Promise<Set<string>> {
    return Promise.resolve(new Set(this.loaded.keys()));
  }

  /** What a loaded module was given, as the kernel shows it: only `key=value` words. */
  moduleParameters(name: string, keys: readonly string[]): Promise<Record<string, string>> {
    const given = new Map(
      (this.loaded.get(name) ?? "").split(/\s+/).filter((w) => w.includes("=")).map((w) => {
        const at = w.indexOf("=");
        return [w.slice(0, at), w.slice(at + 1)] as const;
      }),
    );
    return Promise.resolve(
      Object.fromEntries(keys.flatMap((k) => given.has(k) ? [[k, given.get(k)!]] : [])),
    );
  }

  kexecLoad(image: KexecImage): Promise<void> {
    try {
      this.faults.check("kexec_file_load", [image]);
      for (const f of [image.kernel, image.initramfs]) {
        if (f !== undefined && !this.#files.has(f)) throw sysError("kexec_file_load", "ENOENT", f);
      }
      this.staged = { ...image };
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  kexecUnload(): Promise<void> {
    this.staged = null;
    return Promise.resolve();
  }
}
