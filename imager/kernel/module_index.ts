/**
 * Builds the {@link ModuleIndex} of an extracted kernel's
 * `/lib/modules/<release>` directory: from modules.dep when depmod has run,
 * otherwise from each module's own `.modinfo` (Debian's package ships none).
 */
import {
  type ModuleIndex,
  moduleName,
  type ModuleRef,
  parseModulesBuiltin,
  parseModulesDep,
} from "./module_closure.ts";
import { parseModInfo } from "./modinfo.ts";

/**
 * Index the modules under `modulesDir`.
 * @throws Deno.errors.NotFound when modules.builtin is missing (not a modules dir).
 */
export async function loadModuleIndex(modulesDir: string): Promise<ModuleIndex> {
  const builtin = parseModulesBuiltin(await Deno.readTextFile(`${modulesDir}/modules.builtin`));
  const depText = await Deno.readTextFile(`${modulesDir}/modules.dep`).catch((e) => {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  });
  if (depText !== undefined) return { modules: parseModulesDep(depText), builtin };
  const modules = new Map<string, ModuleRef>();
  for await (const path of walkModules(modulesDir, "kernel")) {
    const info = parseModInfo(await Deno.readFile(`${modulesDir}/${path}`), path);
    const deps = (info.get("depends")?.[0] ?? "").split(",").filter(Boolean).map(moduleName);
    const name = moduleName(path);
    modules.set(name, { name, path, deps });
  }
  return { modules, builtin };
}

async function* walkModules(root: string, rel: string): AsyncGenerator<string> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(`${root}/${rel}`)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory) yield* walkModules(root, path);
    else if (/\.ko(\.(xz|zst|gz))?$/.test(e.name)) yield path;
  }
}
