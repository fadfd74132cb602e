/**
 * Publishes the runtime's per-controller health as ControllerStatus resources,
 * so `machinectl get controllerstatus` shows failures and backoff.
 */
import { type ControllerStats, deepFreeze, type DependencyGraph } from "../runtime/mod.ts";
import {
  CONTROLLER_STATUS,
  type ControllerStatusSpec,
  type MachineStore,
} from "../resources/mod.ts";

/** The owner of ControllerStatus resources. */
export const CONTROLLER_STATUS_OWNER = "runtime.ControllerStatusPublisher";

/**
 * Returns an `onStats` callback for the runtime. Writes are synchronous
 * (create or compare-and-swap update) so they keep the order stats were emitted in.
 */
export function controllerStatusPublisher(
  store: MachineStore,
  declaration: (name: string) => DependencyGraph["controllers"][number] | undefined,
): (stats: ControllerStats) => void {
  return (stats) => {
    const decl = declaration(stats.name);
    // Frozen here, so the store takes it as it is instead of cloning it: this
    // runs after every cycle of every controller (issue 27's guest profile).
    const spec: ControllerStatusSpec = deepFreeze({
      state: stats.state,
      reconciles: stats.reconciles,
      failures: stats.failures,
      consecutiveFailures: stats.consecutiveFailures,
      lastError: stats.lastError ?? "",
      lastReconcile: stats.lastReconcileAt ? new Date(stats.lastReconcileAt).toISOString() : "",
      lastDurationMs: stats.lastDurationMs ?? 0,
      inputs: decl?.inputs.map((i) => i.type) ?? [],
      outputs: decl?.outputs.map((o) => o.type) ?? [],
    });
    const ptr = { type: CONTROLLER_STATUS, namespace: "runtime", id: stats.name } as const;
    const cur = store.find(ptr.type, ptr.namespace, ptr.id);
    if (!cur) store.create({ ...ptr, spec, owner: CONTROLLER_STATUS_OWNER });
    else {
      store.update({ ...ptr, version: cur.metadata.version, spec, owner: CONTROLLER_STATUS_OWNER });
    }
  };
}
