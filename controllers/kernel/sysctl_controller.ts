/**
 * SysctlController: writes `machine.sysctls` under /proc/sys and publishes
 * one KernelParamStatus per key; restores a key's default (the value it had
 * before machined first wrote it) when the key leaves the config. Inputs:
 * MachineConfig, and KernelModuleStatus because loading a module can bring
 * a key into existence (`br_netfilter` → `net.bridge.*`). Output:
 * KernelParamStatus.
 * @module
 */
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import {
  KERNEL_MODULE_STATUS,
  KERNEL_PARAM_STATUS,
  type KernelParamStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import {
  isUnknownSysctl,
  normalizeSysctlValue,
  type SysctlBackend,
  sysctlPath,
} from "./sysctl_backend.ts";

/** What the controller needs. */
export interface SysctlControllerDeps {
  backend: SysctlBackend;
  events?: EventBus;
  /** Retry keys that failed (unknown, refused) this often. @default 30000 */
  retryMs?: number;
  /** Re-read and re-apply every key this often, undoing drift. @default 300000 */
  resyncMs?: number;
}

const NAME = "kernel.SysctlController";
const NAMESPACE = "kernel";

/** A key machined changed (or found as wanted), with the value it had before. */
interface Original {
  /** The key as configured, also the status id. */
  key: string;
  value: string;
}

/** Builds the controller. */
export function sysctlController(deps: SysctlControllerDeps): MachineController {
  return new SysctlController(deps);
}

/** See the module doc. */
export class SysctlController implements MachineController {
  readonly name = NAME;
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
    { type: KERNEL_MODULE_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [{ type: KERNEL_PARAM_STATUS, kind: "exclusive" }] as const;
  readonly resyncInterval: number;

  /** Defaults by sysctl path, recorded on first touch, dropped once restored. */
  #originals = new Map<string, Original>();

  constructor(private readonly deps: SysctlControllerDeps) {
    this.resyncInterval = deps.resyncMs ?? 300_000;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    if (!config) {
      // No config (yet): change nothing, keep what is reported.
      for (const r of ctx.list(KERNEL_PARAM_STATUS)) ctx.keep(r.metadata);
      return;
    }
    const wanted = Object.entries(config.machine.sysctls);
    const wantedPaths = new Set(wanted.map(([key]) => sysctlPath(key)));
    let failed = false;
    for (const [key, desired] of wanted) {
      const status = await this.#apply(key, desired);
      failed ||= status.error !== "";
      await ctx.apply({ type: KERNEL_PARAM_STATUS, namespace: NAMESPACE, id: key }, status);
    }
    for (const [path, original] of [...this.#originals]) {
      if (wantedPaths.has(path)) continue;
      const status = await this.#restore(path, original);
      if (status) {
        failed = true;
        await ctx.apply(
          { type: KERNEL_PARAM_STATUS, namespace: NAMESPACE, id: original.key },
          status,
        );
      }
    }
    if (failed) ctx.requeueAfter(this.deps.retryMs ?? 30_000);
  }

  /** Write one wanted key if it differs; the status says how it went. */
  async #apply(key: string, desired: string): Promise<KernelParamStatusSpec> {
    const { backend } = this.deps;
    const path = sysctlPath(key);
    const recorded = this.#originals.get(path)?.value;
    const base = {
      key,
      desired,
      default: recorded === undefined ? null : normalizeSysctlValue(recorded),
    };
    let current: string;
    try {
      current = await backend.read(key);
    } catch (e) {
      const error = isUnknownSysctl(e) ? "unknown sysctl" : (e as Error).message;
      return { ...base, current: null, applied: false, error };
    }
    if (!this.#originals.has(path)) this.#originals.set(path, { key, value: current });
    const status = { ...base, default: normalizeSysctlValue(this.#originals.get(path)!.value) };
    if (normalizeSysctlValue(current) === normalizeSysctlValue(desired)) {
      return { ...status, current: normalizeSysctlValue(current), applied: true, error: "" };
    }
    let error = "";
    try {
      await backend.write(key, desired);
      current = await backend.read(key);
    } catch (e) {
      error = isUnknownSysctl(e) ? "unknown sysctl" : (e as Error).message;
    }
    const applied = normalizeSysctlValue(current) === normalizeSysctlValue(desired);
    if (applied) {
      this.deps.events?.emit("controller", NAME, "applied", `sysctl ${key} = ${desired}`);
    } else if (error === "") {
      error = `the kernel reports "${normalizeSysctlValue(current)}" after writing "${desired}"`;
    }
    return { ...status, current: normalizeSysctlValue(current), applied, error };
  }

  /**
   * Put back the value a key had before machined wrote it. Returns a status
   * to keep reporting when that fails; undefined once restored (or gone).
   */
  async #restore(path: string, original: Original): Promise<KernelParamStatusSpec | undefined> {
    const { backend } = this.deps;
    try {
      const current = await backend.read(original.key);
      if (normalizeSysctlValue(current) !== normalizeSysctlValue(original.value)) {
        await backend.write(original.key, original.value);
        this.deps.events?.emit(
          "controller",
          NAME,
          "restored",
          `sysctl ${original.key} restored to ${original.value}`,
        );
      }
    } catch (e) {
      if (!isUnknownSysctl(e)) {
        return {
          key: original.key,
          desired: original.value,
          current: null,
          default: normalizeSysctlValue(original.value),
          applied: false,
          error: `Cannot restore the default: ${(e as Error).message}`,
        };
      }
      // The key vanished (its module went away): nothing left to restore.
    }
    this.#originals.delete(path);
    return undefined;
  }
}
