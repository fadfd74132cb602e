/**
 * machined-edge, the Rust network edge (native-ops/edge/), as machined runs
 * it: its binary and ProcessSpec. The ApidSupervisor supervises it exactly as
 * it supervises the Deno apid (same ready line, same restarts).
 *
 * @example
 * ```ts
 * import { edgeProcessSpec } from "./api/edge/mod.ts";
 * import { APID_DEFAULTS } from "./api/apid/mod.ts";
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
