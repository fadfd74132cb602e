/**
 * Works out which kernel modules the initramfs must carry: the requested
 * ones plus everything they depend on, in an order where each module comes
 * after its dependencies (the order PID 1 loads them). Modules built into the
 * kernel are reported separately and need no file.
 */

/** One loadable module: its normalised name, path under the modules dir, and dependency names. */
export interface ModuleRef {
  name: string;
  path: string;
  deps: string[];
}

/** All modules of one kernel, plus the names built into it. */
export interface ModuleIndex {
  modules: Map<string, ModuleRef>;
  builtin: Set<string>;
}

/** The result of {@link resolveModuleClosure}. */
export interface ModuleClosure {
  /** Modules to ship, dependencies first. */
  load: ModuleRef[];
  /** Requested names that are built into the kernel (nothing to load). */
  builtin: string[];
}

/** A requested or depended-on module that the kernel has neither built in nor as a file. */
export class ModuleNotFoundError extends Error {
  override name = "ModuleNotFoundError";
  constructor(readonly module: string, readonly requiredBy?: string) {
    super(
      `Kernel module "${module}"${
        requiredBy ? ` (needed by "${requiredBy}")` : ""
      } is neither built in nor shipped`,
    );
  }
}

/** The kernel's name for a module file: basename without ".ko[.xz|.zst|.gz]", "-" as "_". */
export function moduleName(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return base.replace(/\.ko(\.(xz|zst|gz))?$/, "").replaceAll("-", "_");
}

/** Parse modules.dep ("kernel/a.ko: kernel/b.ko kernel/c.ko" per line). */
export function parseModulesDep(text: string): Map<string, ModuleRef> {
  const out = new Map<string, ModuleRef>();
  for (const line of text.split("\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const path = line.slice(0, colon).trim();
    const deps = line.slice(colon + 1).trim().split(/\s+/).filter(Boolean).map(moduleName);
    out.set(moduleName(path), { name: moduleName(path), path, deps });
  }
  return out;
}

/** Parse modules.builtin (one "kernel/fs/ext4/ext4.ko" per line) into names. */
export function parseModulesBuiltin(text: string): Set<string> {
  return new Set(text.split("\n").map((l) => l.trim()).filter(Boolean).map(moduleName));
}

/**
 * The closure of `wanted` over the dependency graph, dependencies first.
 * The order is deterministic: a depth-first walk in the order names are given.
 * @throws ModuleNotFoundError when a name is neither a module nor built in.
 */
export function resolveModuleClosure(index: ModuleIndex, wanted: string[]): ModuleClosure {
  const load: ModuleRef[] = [];
  const builtin: string[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (raw: string, requiredBy?: string) => {
    const name = moduleName(raw);
    if (done.has(name) || visiting.has(name)) return;
    const ref = index.modules.get(name);
    if (!ref) {
      if (!index.builtin.has(name)) throw new ModuleNotFoundError(name, requiredBy);
      if (!requiredBy) builtin.push(name);
      done.add(name);
      return;
    }
    visiting.add(name);
    for (const dep of ref.deps) visit(dep, name);
    visiting.delete(name);
    done.add(name);
    load.push(ref);
  };
  for (const w of wanted) visit(w);
  return { load, builtin };
}
