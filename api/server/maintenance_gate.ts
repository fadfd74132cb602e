/**
 * machined's side of maintenance mode: apid forwards a caller without a client
 * certificate as a maintenance caller, and machined re-checks, because the
 * socket is only as trusted as apid. Such a call is served only while the node
 * really is in maintenance mode (no CA in use), only for the RPCs
 * api/auth/maintenance.ts allows, and ApplyConfiguration through the gate,
 * which lets one config in: once a config has been accepted the gate is shut
 * and every later call without mutual TLS is refused.
 */
import type { Interceptor } from "@connectrpc/connect";
import { PermissionDeniedError } from "../errors/mod.ts";
import { authorizeMaintenance } from "../auth/mod.ts";
import type { CallerIdentity } from "../auth/mod.ts";

/** The node's maintenance state, as the API needs it (api/host/maintenance_gate.ts implements it). */
export interface MaintenanceGate {
  /** True while the node has no CA and has not accepted a config over the insecure API. */
  readonly active: boolean;
  /**
   * Runs an ApplyConfiguration from a maintenance caller, one at a time:
   * re-checks {@link active}, checks the config carries a usable CA, and shuts
   * the gate when `run` succeeds and it was not a dry run.
   * @throws PermissionDeniedError once shut; InvalidArgumentError without a CA
   */
  apply<T>(configYaml: string, dryRun: boolean, run: () => Promise<T>): Promise<T>;
}

/**
 * Checks a maintenance caller's call; returns undefined to let it through
 * unchanged, or the wrapped call for ApplyConfiguration.
 * @throws PermissionDeniedError when the node is not in maintenance
 *   mode or the RPC is not one maintenance answers.
 */
export function checkMaintenanceCall(
  gate: MaintenanceGate | undefined,
  caller: CallerIdentity,
  req: Parameters<Parameters<Interceptor>[0]>[0],
  next: Parameters<Interceptor>[0],
): ReturnType<Parameters<Interceptor>[0]> | undefined {
  if (!caller.maintenance) return undefined;
  if (!gate?.active) {
    throw new PermissionDeniedError(
      "the node is not in maintenance mode (it has a config or a CA): call it with mutual TLS",
      { context: { method: req.method.name } },
    );
  }
  authorizeMaintenance(req.service.typeName, req.method.name, req.stream ? undefined : req.message);
  if (req.method.name !== "ApplyConfiguration" || req.stream) return next(req);
  const m = req.message as unknown as { configYaml?: string; dryRun?: boolean };
  return gate.apply(m.configYaml ?? "", m.dryRun === true, () => next(req));
}
