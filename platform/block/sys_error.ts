/**
 * Map Deno's file-system errors to {@link SysError}, so callers of the block
 * backend see one error type whether the failure came from an ioctl or from a
 * plain open/read/write.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";

const BY_CLASS: Array<[new (...a: never[]) => Error, string]> = [
  [Deno.errors.NotFound, "ENOENT"],
  [Deno.errors.PermissionDenied, "EACCES"],
  [Deno.errors.AlreadyExists, "EEXIST"],
  [Deno.errors.IsADirectory, "EISDIR"],
  [Deno.errors.NotADirectory, "ENOTDIR"],
  [Deno.errors.Busy, "EBUSY"],
];

/** Wrap `e` (from a Deno file API call `op` on `path`) as a SysError. */
export function sysError(op: string, path: string, e: unknown): unknown {
  if (e instanceof SysError || !(e instanceof Error)) return e;
  const m = /os error (\d+)/.exec(e.message);
  if (m) return new SysError(op, Number(m[1]), path, { cause: e });
  const hit = BY_CLASS.find(([cls]) => e instanceof cls);
  return hit ? new SysError(op, errnoValue(hit[1]), path, { cause: e }) : e;
}
