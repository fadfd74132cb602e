/** ControllerStatus: each controller's health (cycles, failures, backoff) as data. */
import type { ResourceDescriptor } from "../descriptor.ts";

export const CONTROLLER_STATUS = "ControllerStatus";

export interface ControllerStatusSpec {
  readonly state: "idle" | "running" | "backoff" | "stopped";
  readonly reconciles: number;
  readonly failures: number;
  readonly consecutiveFailures: number;
  readonly lastError: string;
  /** ISO time of the last finished cycle, or "". */
  readonly lastReconcile: string;
  readonly lastDurationMs: number;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
}

export const controllerStatusDescriptor: ResourceDescriptor<
  typeof CONTROLLER_STATUS,
  ControllerStatusSpec
> = {
  type: CONTROLLER_STATUS,
  namespace: "runtime",
  aliases: ["controllerstatus", "controllerstatuses", "controllers", "controller"],
  description: "Health of each controller: cycles, failures and backoff",
  columns: [
    { header: "STATE", value: (s) => s.state },
    { header: "RECONCILES", value: (s) => String(s.reconciles) },
    { header: "FAILURES", value: (s) => String(s.failures) },
    { header: "LAST ERROR", value: (s) => s.lastError },
  ],
};
