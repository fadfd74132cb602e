/**
 * ModuleController: loads `machine.kernel.modules`, each with its parameters
 * and its dependencies first (modules.dep, through platform/kmod), and
 * publishes one KernelModuleStatus per module, with the parameters the kernel
 * shows in force (/sys/module/<name>/parameters). Modules are never unloaded:
 * one removed from the config keeps its status, marked "kept loaded".
 * Input: MachineConfig. Output: KernelModuleStatus.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  KERNEL_MODULE_STATUS,
  type KernelModuleStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import {
  type KmodBackend,
  loadModuleTree,
  type ModuleIndex,
  moduleName,
  type ModuleTreeResult,
  readModuleIndex,
  resolveLoadOrder,
} from "../../platform/kmod/mod.ts";

/** What the controller needs. */
export interface ModuleControllerDeps {
  backend: KmodBackend;
  /** The running kernel's module index. @default readModuleIndex() (/lib/modules/$(uname -r)) */
  index?: () => Promise<ModuleIndex>;
  events?: EventBus;
  /** Retry failed modules this often. @default 60000 */
  retryMs?: number;
}

const NAME = "kernel.ModuleController";
const NAMESPACE = "kernel";
/** What a status says once its module left the config. */
export const KEPT_LOADED = "removed from config; kept loaded (modules are never unloaded)";

/** Builds the controller. */
export function moduleController(deps: ModuleControllerDeps): MachineController {
  return new ModuleController(deps);
}

/** See the module doc. */
export class ModuleController implements MachineController {
  readonly name = NAME;
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: KERNEL_MODULE_STATUS, kind: "exclusive" }] as const;

  #index: ModuleIndex | undefined;

  constructor(private readonly deps: ModuleControllerDeps) {}

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    const existing = new Map(ctx.list(KERNEL_MODULE_STATUS).map((r) => [r.metadata.id, r.spec]));
    if (!config) {
      for (const id of existing.keys()) ctx.keep(ptr(id));
      return;
    }
    const loaded = await this.deps.backend.loadedModules();
    const seen = new Set<string>();
    let failed = false;
    for (const m of config.machine.kernel.modules) {
      const name = moduleName(m.name);
      if (seen.has(name)) continue; // listed twice: the first entry wins
      seen.add(name);
      const prev = existing.get(name);
      const status = prev && stillLoaded(prev, loaded)
        ? { ...prev, configured: true, message: noteFor(prev, m.parameters) }
        : await this.#load(name, m.parameters);
      failed ||= status.state === "failed";
      const inForce = status.state === "failed" ? [] : await this.#inForce(name, m.parameters);
      await ctx.apply(ptr(name), { ...status, inForce });
    }
    for (const [id, spec] of existing) {
      if (seen.has(id) || spec.state === "failed") continue; // a failed one just goes away
      await ctx.apply(ptr(id), { ...spec, configured: false, message: KEPT_LOADED });
    }
    if (failed) ctx.requeueAfter(this.deps.retryMs ?? 60_000);
  }

  async #load(name: string, parameters: readonly string[]): Promise<KernelModuleStatusSpec> {
    const base = {
      name,
      parameters: [...parameters],
      inForce: [] as string[],
      configured: true,
      dependencies: [] as string[],
      loadedDependencies: [] as string[],
      message: "",
    };
    let index: ModuleIndex;
    let result: ModuleTreeResult;
    try {
      index = await this.#moduleIndex();
      result = await loadModuleTree(this.deps.backend, index, name, parameters.join(" "));
    } catch (e) {
      const error = `Cannot load module "${name}": ${(e as Error).message}`;
      this.deps.events?.emit("controller", NAME, "module-failed", error);
      return { ...base, state: "failed", error };
    }
    const state = outcome(name, result);
    const dependencies = index.dep.has(name)
      ? resolveLoadOrder(index.dep, name).filter((d) => d !== name)
      : [];
    const loadedDependencies = result.loaded.filter((d) => d !== name);
    if (state === "loaded") {
      this.deps.events?.emit("controller", NAME, "module-loaded", `Loaded kernel module "${name}"`);
    }
    const status = { ...base, state, dependencies, loadedDependencies, error: "" };
    return { ...status, message: noteFor(status, parameters) };
  }

  /** The configured keys as the kernel shows them, `key=value`, in config order. */
  async #inForce(name: string, parameters: readonly string[]): Promise<string[]> {
    const keys = parameters.map((p) => p.slice(0, p.indexOf("=")));
    const shown = await this.deps.backend.moduleParameters(name, keys).catch(() => ({}));
    return keys.flatMap((k) => k in shown ? [`${k}=${(shown as Record<string, string>)[k]}`] : []);
  }

  /** Read once and cached (modules.dep does not change under a running kernel); failures retry. */
  async #moduleIndex(): Promise<ModuleIndex> {
    this.#index ??= await (this.deps.index ?? (() => readModuleIndex()))();
    return this.#index;
  }
}

function ptr(id: string) {
  return { type: KERNEL_MODULE_STATUS, namespace: NAMESPACE, id } as const;
}

/** What happened to the named module itself. */
export function outcome(name: string, r: ModuleTreeResult): KernelModuleStatusSpec["state"] {
  if (r.loaded.includes(name)) return "loaded";
  const skipped = r.skipped.find((s) => s.name === name);
  return skipped?.reason === "builtin" ? "builtin" : "already-loaded";
}

/**
 * Loaded (or built in) as reported, and the kernel agrees: a module someone
 * unloaded behind machined's back is loaded again.
 */
function stillLoaded(s: KernelModuleStatusSpec, loaded: Set<string>): boolean {
  if (s.state === "builtin") return true;
  return s.state !== "failed" && loaded.has(s.name);
}

/** Explains parameters that could not take effect. */
function noteFor(s: KernelModuleStatusSpec, wanted: readonly string[]): string {
  const same = s.parameters.length === wanted.length &&
    s.parameters.every((p, i) => p === wanted[i]);
  if (s.state === "builtin" && wanted.length > 0) {
    return "built in: parameters go on the kernel command line";
  }
  if (s.state === "already-loaded" && wanted.length > 0) {
    return "loaded before machined: parameters not applied";
  }
  if (!same) return "parameters changed: not applied until the module is reloaded (after a reboot)";
  return "";
}
