/**
 * machined-edge, the Rust network edge (native-ops/edge/), as machined runs
 * it: its binary and ProcessSpec, what it is told (`ApidOptions`, `apidArgs`,
 * the limits from `machine.api`), the user it runs as, the supervisor that
 * keeps it running (`ApidSupervisor`) and the PKI directory it reads
 * (`loadApidPki`). The `Apid` names are the edge's role (the API daemon); the
 * Deno apid process they once named is gone.
 *
 * @example
 * ```ts
 * import { edgeProcessSpec } from "./api/edge/mod.ts";
 * import { APID_DEFAULTS } from "./api/edge/mod.ts";
 * const spec = edgeProcessSpec({
 *   apid: { ...APID_DEFAULTS, pkiDir: "/run/machined/apid-pki", socketPath: "/run/machined/api.sock" },
 *   dropUser: true,
 * });
 * console.log(spec.argv[0]);
 * ```
 * @module
 */
export { budget, budgetArgs, EDGE_BUDGETS, type EdgeBudget } from "./budgets.ts";
export {
  edgeArgs,
  edgeBinaryPath,
  type EdgeLimits,
  type EdgeOptions,
  edgeProcessSpec,
  type EdgeProcessSpecOptions,
  IMAGE_EDGE_PATH,
} from "./edge_process_spec.ts";
export { APID_DEFAULTS, apidArgs, type ApidOptions } from "./apid_options.ts";
export { APID_GID, APID_UID } from "./apid_process_spec.ts";
export {
  ApidSupervisor,
  type ApidSupervisorEvent,
  type ApidSupervisorOptions,
} from "./supervisor.ts";
export { type ApidPki, loadApidPki } from "./load_apid_pki.ts";
export { apidLimitsFromConfig } from "./apid_options.ts";
export { MAINTENANCE_MARKER } from "./load_apid_pki.ts";
