/**
 * The runtime domain's controllers: machine config → ServiceSpec (user
 * services plus the built-in containerd), and the CRI probe → RuntimeStatus.
 * The supervisor (supervisor/) runs the ServiceSpecs and owns ServiceStatus.
 *
 * @example
 * ```ts
 * import { runtimeControllers } from "./controllers/services/mod.ts";
 * for (const c of runtimeControllers({})) machined.runtime.register(c);
 * ```
 * @module
 */
import type { MachineController } from "../../resources/mod.ts";
import {
  serviceSpecController,
  type ServiceSpecControllerOptions,
} from "./service_spec_controller.ts";
import {
  runtimeStatusController,
  type RuntimeStatusControllerOptions,
} from "./runtime_status_controller.ts";

/** What the runtime controllers need. */
export interface RuntimeControllerDeps extends ServiceSpecControllerOptions {
  readonly runtimeStatus?: RuntimeStatusControllerOptions;
}

/** The controllers this domain registers. */
export function runtimeControllers(deps: RuntimeControllerDeps = {}): MachineController[] {
  return [serviceSpecController(deps), runtimeStatusController(deps.runtimeStatus)];
}

export {
  CONTAINERD_SERVICE_ID,
  containerdServiceSpec,
  serviceSpecController,
  type ServiceSpecControllerOptions,
  serviceSpecsFromConfig,
  type ServiceTrust,
  TRUST_ENV,
  withTrust,
} from "./service_spec_controller.ts";
export {
  probeRuntime,
  runtimeStatusController,
  type RuntimeStatusControllerOptions,
} from "./runtime_status_controller.ts";
