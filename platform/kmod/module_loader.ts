/**
 * Load a module with its dependencies, the way modprobe would: resolve the
 * order from modules.dep, skip built-in and already-loaded modules, and load
 * the rest through a {@link KmodBackend}. Parameters apply to the named
 * module only.
 * @module
 */
import type { KmodBackend } from "./backend.ts";
import {
  moduleName,
  type ModulesDep,
  parseModulesBuiltin,
  parseModulesDep,
  resolveLoadOrder,
} from "./modules_dep.ts";

/** The module tree of one kernel release. */
export interface ModuleIndex {
  /** e.g. `/lib/modules/6.18.44` */
  dir: string;
  dep: ModulesDep;
  builtin: Set<string>;
}

/**
 * Read modules.dep and modules.builtin from `dir` (default: the running kernel's).
 * A missing modules.builtin counts as empty.
 * @throws Deno.errors.NotFound when modules.dep is missing
 */
export async function readModuleIndex(dir?: string): Promise<ModuleIndex> {
  // Merged-/usr systems (and machined's initramfs) keep modules under /usr/lib.
  dir ??= await firstExisting([
    `/lib/modules/${Deno.osRelease()}`,
    `/usr/lib/modules/${Deno.osRelease()}`,
  ]);
  const dep = parseModulesDep(await Deno.readTextFile(`${dir}/modules.dep`));
  let builtin = new Set<string>();
  try {
    builtin = parseModulesBuiltin(await Deno.readTextFile(`${dir}/modules.builtin`));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return { dir, dep, builtin };
}

async function firstExisting(paths: string[]): Promise<string> {
  for (const p of paths) {
    try {
      await Deno.stat(`${p}/modules.dep`);
      return p;
    } catch {
      // try the next
    }
  }
  return paths[0];
}

/** What {@link loadModuleTree} did. */
export interface ModuleTreeResult {
  loaded: string[];
  skipped: Array<{ name: string; reason: "builtin" | "already-loaded" }>;
}

/**
 * Load `name` and everything it depends on, dependencies first.
 * @throws RangeError when `name` (or a dependency) is neither in modules.dep nor built in
 * @throws SysError from the first load that fails
 */
export async function loadModuleTree(
  backend: KmodBackend,
  index: ModuleIndex,
  name: string,
  params = "",
): Promise<ModuleTreeResult> {
  const target = moduleName(name);
  const result: ModuleTreeResult = { loaded: [], skipped: [] };
  if (index.builtin.has(target)) {
    result.skipped.push({ name: target, reason: "builtin" });
    return result;
  }
  const loaded = await backend.loadedModules();
  for (const mod of resolveLoadOrder(index.dep, target)) {
    if (index.builtin.has(mod)) {
      result.skipped.push({ name: mod, reason: "builtin" });
      continue;
    }
    if (loaded.has(mod)) {
      result.skipped.push({ name: mod, reason: "already-loaded" });
      continue;
    }
    const entry = index.dep.get(mod)!;
    const path = entry.path.startsWith("/") ? entry.path : `${index.dir}/${entry.path}`;
    const outcome = await backend.loadModule(path, mod === target ? params : "");
    if (outcome === "loaded") result.loaded.push(mod);
    else result.skipped.push({ name: mod, reason: "already-loaded" });
  }
  return result;
}
