/**
 * The typed error an apply controller throws when the kernel refuses a change
 * it cannot treat as converged, carrying what was attempted and the cause.
 * @module
 */
import { isSysError } from "../../native-ops/mod.ts";

/** A kernel change that failed; `cause` is the backend's error (usually a SysError). */
export class NetworkApplyError extends Error {
  override name = "NetworkApplyError";
  constructor(
    /** e.g. `add address`, `delete route`, `set MTU of`. */
    readonly action: string,
    /** The address, route or value, quoted in the message. */
    readonly object: string,
    readonly link: string,
    options: { cause: unknown },
  ) {
    const code = isSysError(options.cause) ? options.cause.code : String(options.cause);
    super(`Cannot ${action} "${object}" on link "${link}": ${code}`, options);
  }
}

/** True when `e` is a SysError with one of `codes`. */
export function hasErrno(e: unknown, ...codes: string[]): boolean {
  return isSysError(e) && codes.includes(e.code);
}
