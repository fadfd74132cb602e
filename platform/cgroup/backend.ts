/**
 * Per-service cgroups: the supervisor gives each service its own cgroup
 * directory and writes its limits there before the process joins it (through
 * `ProcessSpec.cgroup`). Behind this interface so supervisor tests run without
 * root and the kernel's file names stay in one place.
 * @module
 */

/** Limits of one cgroup; absent fields are left at the kernel default (`max`). */
export interface CgroupLimits {
  /** `memory.max` in bytes. */
  memoryMax?: number;
  /** `cpu.max`: `"<quota|max> <period>"` in µs. */
  cpuMax?: string;
  /** `pids.max`. */
  pidsMax?: number;
}

/** A cgroup operation that failed, with the file or directory and the cause. */
export class CgroupError extends Error {
  override name = "CgroupError";
  constructor(
    readonly op: "mkdir" | "write" | "read" | "rmdir" | "enable",
    readonly path: string,
    override readonly cause: unknown,
    detail = cause instanceof Error ? cause.message : String(cause),
  ) {
    super(`Cannot ${op} cgroup "${path}": ${detail}`, { cause });
  }
}

/**
 * Creating, limiting and removing service cgroups under one root.
 *
 * Idempotence: `prepare` creates the directory when missing and (re)writes
 * every limit, resetting absent ones to `max`, so calling it again with new
 * limits converges; `remove` of a missing cgroup succeeds.
 */
export interface CgroupBackend {
  /**
   * Creates `<root>/<name>` with `limits` and returns its path for
   * `ProcessSpec.cgroup`.
   * @throws CgroupError when the directory cannot be made or a limit cannot be written
   * (for example when the controller is not available).
   */
  prepare(name: string, limits: CgroupLimits): Promise<string>;
  /** The limits in force (absent when `max`). @throws CgroupError when missing. */
  read(name: string): Promise<CgroupLimits>;
  /** PIDs in the cgroup (empty when it does not exist). */
  pids(name: string): Promise<number[]>;
  /** OOM kills recorded for the cgroup (0 when the kernel does not count them). */
  oomKills(name: string): Promise<number>;
  /** Removes the (empty) cgroup. @throws CgroupError EBUSY while processes remain. */
  remove(name: string): Promise<void>;
}

/**
 * Checks that `name` is one path component, so a service id can never name a
 * cgroup outside the root. @throws RangeError
 */
export function checkCgroupName(name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name === "." || name === "..") {
    throw new RangeError(`Invalid cgroup name "${name}"`);
  }
  return name;
}
