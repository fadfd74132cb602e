/**
 * The Reboot and Upgrade RPCs' RebootMode, as the node's {@link RebootMode}.
 */
import { RebootMode as ProtoRebootMode } from "../gen/machined/v1/machine_pb.ts";
import type { RebootMode } from "./node_actions.ts";

/** UNSPECIFIED is `default` (cold for Reboot, kexec for Upgrade). Pure. */
export function rebootModeFromProto(mode: ProtoRebootMode): RebootMode {
  switch (mode) {
    case ProtoRebootMode.KEXEC:
      return "kexec";
    case ProtoRebootMode.POWERCYCLE:
      return "powercycle";
    default:
      return "default";
  }
}
