/**
 * The `--mode` flag of `machinectl reboot` and `machinectl upgrade`: how the
 * node boots its next kernel (kexec, or a cold powercycle through the
 * firmware and the loader).
 */
import { RebootMode } from "../../api/gen/machined/v1/machine_pb.ts";
import { CliError } from "../io.ts";

/** The flag's definition, with what the default means for `command`. */
export function rebootModeFlag(defaultMeans: string) {
  return {
    kind: "string" as const,
    value: "kexec|powercycle",
    help: `kexec | powercycle (default: ${defaultMeans})`,
  };
}

/**
 * `kexec`, `powercycle` or absent (UNSPECIFIED: the RPC's default).
 * @throws CliError for any other word.
 */
export function parseRebootMode(command: string, value: unknown): RebootMode {
  if (value === undefined || value === "default") return RebootMode.UNSPECIFIED;
  if (value === "kexec") return RebootMode.KEXEC;
  if (value === "powercycle") return RebootMode.POWERCYCLE;
  throw new CliError(
    `${command}: --mode must be kexec or powercycle, not ${JSON.stringify(value)}`,
  );
}
