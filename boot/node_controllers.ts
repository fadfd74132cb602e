/**
 * The domain controllers a node runs, built from its backends. The composition
 * root for controllers: each domain exposes `<domain>Controllers(deps)`.
 */
import type { MachineController } from "../resources/mod.ts";
import type { NodeBackends } from "../node/backends.ts";

/** Every domain controller for a node with these backends. */
export function nodeControllers(_backends: NodeBackends): MachineController[] {
  return [];
}
