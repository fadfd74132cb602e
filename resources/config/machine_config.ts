/**
 * MachineConfig: the validated machine configuration, as an input resource, so
 * that every domain's controllers react to a changed config without a restart.
 */
import type { MachineConfig } from "../../config/schema/machine_config.ts";
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const MACHINE_CONFIG = "MachineConfig";
/** The single MachineConfig's id. */
export const MACHINE_CONFIG_ID = "v1alpha1";

/** The parsed config plus where it came from. */
export interface MachineConfigSpec {
  /** File path, `cmdline`, `image`, or `api`. */
  readonly source: string;
  readonly config: MachineConfig;
}

export const machineConfigDescriptor: ResourceDescriptor<typeof MACHINE_CONFIG, MachineConfigSpec> =
  {
    type: MACHINE_CONFIG,
    namespace: "config",
    aliases: ["machineconfig", "machineconfigs", "mc", "config"],
    description: "The validated machine configuration in force",
    columns: [
      { header: "SOURCE", value: (s) => s.source },
      { header: "HOSTNAME", value: (s) => s.config.machine.hostname ?? "" },
    ],
  };
