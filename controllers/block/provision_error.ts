/**
 * The typed error of a provisioning or mount step, carrying the step, the
 * device and the cause, and its conversion to the VolumeError data that
 * VolumeStatus and MountStatus publish.
 * @module
 */
import { isSysError } from "../../native-ops/mod.ts";
import type { VolumeError } from "../../resources/mod.ts";
import { CommandError } from "./run_command.ts";

/** A step of provisioning or mounting failed. */
export class ProvisionError extends Error {
  override name = "ProvisionError";
  constructor(
    /** e.g. `write partition table`, `format`, `mount`. */
    readonly step: string,
    /** The disk, partition or mount point it was applied to. */
    readonly device: string,
    options: { cause: unknown },
  ) {
    const c = options.cause;
    super(`Cannot ${step} "${device}": ${c instanceof Error ? c.message : String(c)}`, options);
  }
}

/** The data form of an error for a status resource: message, errno/refusal code, operation. */
export function toVolumeError(e: unknown): VolumeError {
  const message = e instanceof Error ? e.message : String(e);
  const cause = e instanceof ProvisionError ? e.cause : e;
  if (isSysError(cause)) return { message, code: cause.code, op: cause.op };
  if (cause instanceof CommandError) return { message, code: "", op: cause.argv[0] };
  if (e instanceof ProvisionError) return { message, code: "", op: e.step };
  return { message, code: "", op: "" };
}
