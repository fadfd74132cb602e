/**
 * Kernel module metadata, parsed in TypeScript: modules.dep (each module's
 * path and its dependencies' paths, from depmod), modules.builtin (modules
 * compiled into the kernel), and /proc/modules (what is loaded). Module names
 * are normalised the kernel's way: basename without `.ko[.xz|.zst|.gz]`,
 * dashes as underscores.
 * @module
 */

/** One module from modules.dep. */
export interface ModuleEntry {
  name: string;
  /** Path relative to the module directory, as depmod wrote it. */
  path: string;
  /** Names of the modules it needs, in depmod's order. */
  deps: string[];
}

/** modules.dep as a map from module name. */
export type ModulesDep = Map<string, ModuleEntry>;

/** `drivers/net/virtio_net.ko.zst` → `virtio_net`; `snd-hda` → `snd_hda`. */
export function moduleName(pathOrName: string): string {
  const base = pathOrName.slice(pathOrName.lastIndexOf("/") + 1);
  return base.replace(/\.ko(\.(xz|zst|gz))?$/, "").replaceAll("-", "_");
}

/**
 * Parse modules.dep (`path: dep-path dep-path ...` per line).
 * @throws SyntaxError naming a line without a colon
 */
export function parseModulesDep(text: string): ModulesDep {
  const out: ModulesDep = new Map();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const colon = line.indexOf(":");
    if (colon < 0) throw new SyntaxError(`Cannot parse modules.dep line ${JSON.stringify(raw)}`);
    const path = line.slice(0, colon).trim();
    const deps = line.slice(colon + 1).trim().split(/\s+/).filter((d) => d !== "").map(moduleName);
    out.set(moduleName(path), { name: moduleName(path), path, deps });
  }
  return out;
}

/** Parse modules.builtin (one path per line) into module names. */
export function parseModulesBuiltin(text: string): Set<string> {
  return new Set(text.split("\n").map((l) => l.trim()).filter((l) => l !== "").map(moduleName));
}

/** A loaded module from /proc/modules. */
export interface LoadedModule {
  name: string;
  size: number;
  refcount: number;
  usedBy: string[];
  /** `Live`, `Loading` or `Unloading`. */
  state: string;
}

/** Parse /proc/modules. */
export function parseProcModules(text: string): LoadedModule[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((line) => {
    const [name, size, refcount, usedBy, state] = line.split(/\s+/);
    return {
      name,
      size: Number(size),
      refcount: Number(refcount),
      usedBy: usedBy === "-" ? [] : usedBy.split(",").filter((u) => u !== ""),
      state,
    };
  });
}

/**
 * The order to load `name` in: every dependency before its dependents, each
 * module once, `name` last.
 * @throws RangeError for a module missing from modules.dep or a dependency cycle
 */
export function resolveLoadOrder(dep: ModulesDep, name: string): string[] {
  const order: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (n: string, chain: string[]) => {
    if (state.get(n) === "done") return;
    if (state.get(n) === "visiting") {
      throw new RangeError(`Module dependency cycle: ${[...chain, n].join(" -> ")}`);
    }
    const entry = dep.get(n);
    if (!entry) {
      throw new RangeError(
        `Module "${n}" is not in modules.dep${
          chain.length ? ` (needed by "${chain.at(-1)}")` : ""
        }`,
      );
    }
    state.set(n, "visiting");
    for (const d of entry.deps) visit(d, [...chain, n]);
    state.set(n, "done");
    order.push(n);
  };
  visit(moduleName(name), []);
  return order;
}
