/**
 * How full a mounted filesystem is: statvfs(3), which only native-ops can
 * call (Deno has no statfs). Behind a function type so the observer runs on
 * a fake in tests.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";

/** A filesystem's size, use and free space in bytes. */
export interface FsUsage {
  readonly size: number;
  readonly used: number;
  /** Free to unprivileged users. */
  readonly available: number;
}

/** Reads a mount point's usage. @throws SysError (ENOENT, EACCES...) */
export type FsUsageReader = (target: string) => Promise<FsUsage>;

/** statvfs through native-ops (needs the addon built with `fsUsage`: `deno task native`). */
export const nativeFsUsage: FsUsageReader = (target) =>
  loadNative().fsUsage(target) as Promise<FsUsage>;
