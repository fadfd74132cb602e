/** MachineStatus: the node's boot stage and readiness, as data. */
import type { ResourceDescriptor } from "../descriptor.ts";

export const MACHINE_STATUS = "MachineStatus";
/** The single MachineStatus's id. */
export const MACHINE_STATUS_ID = "machine";

/** Where the node is in its life. */
export type MachineStage =
  | "booting"
  | "running"
  | "maintenance"
  | "rebooting"
  | "shuttingDown";

/** A condition that keeps the node from being ready, with why. */
export interface UnmetCondition {
  readonly name: string;
  readonly reason: string;
}

export interface MachineStatusSpec {
  readonly stage: MachineStage;
  readonly ready: boolean;
  readonly unmetConditions: readonly UnmetCondition[];
  /** True when machined runs as PID 1 (false in dev mode). */
  readonly pid1: boolean;
  readonly mode: "node" | "dev";
}

export const machineStatusDescriptor: ResourceDescriptor<typeof MACHINE_STATUS, MachineStatusSpec> =
  {
    type: MACHINE_STATUS,
    namespace: "runtime",
    aliases: ["machinestatus", "machinestatuses", "ms"],
    description: "Boot stage and readiness of the node",
    columns: [
      { header: "STAGE", value: (s) => s.stage },
      { header: "READY", value: (s) => String(s.ready) },
      { header: "UNMET", value: (s) => s.unmetConditions.map((c) => c.name).join(",") },
    ],
  };
