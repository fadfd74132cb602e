/**
 * Read-only access to a kernel pseudo-filesystem tree (/proc, or a cgroup v2
 * hierarchy under /sys/fs/cgroup), for the observability RPCs. Every parser
 * in this folder reads through it, so the parsers run on a fake in
 * root-free tests and on the host's or node's /proc in the real one.
 * @module
 */

/** A file of the tree could not be read, with the path and the cause. */
export class ProcError extends Error {
  override name = "ProcError";
  constructor(
    readonly op: "read" | "readlink" | "list",
    readonly path: string,
    /** The file is gone (ENOENT/ESRCH: a process that exited meanwhile). */
    readonly gone: boolean,
    override readonly cause?: unknown,
  ) {
    super(
      `Cannot ${op} "${path}": ${cause instanceof Error ? cause.message : String(cause ?? "")}`,
      { cause },
    );
  }
}

/** Whether `e` says that the file is gone (a process exited between two reads). */
export function isProcGone(e: unknown): boolean {
  return e instanceof ProcError && e.gone;
}

/** Whether `e` says that the file may not be read (another user's process without root). */
export function isProcDenied(e: unknown): boolean {
  return e instanceof ProcError && !e.gone && e.cause instanceof Deno.errors.PermissionDenied;
}

/**
 * Reading a tree by paths relative to its root (`meminfo`, `1/stat`,
 * `machined/svc/memory.current`).
 *
 * Idempotence: reading changes nothing; two reads may differ (it is live).
 */
export interface ProcBackend {
  /** The directory this backend reads, e.g. `/proc` (for messages). */
  readonly root: string;
  /** A file's whole text. @throws ProcError (`gone` when missing). */
  readText(path: string): Promise<string>;
  /** A symlink's target (e.g. `1/fd/3` → `socket:[123]`). @throws ProcError */
  readLink(path: string): Promise<string>;
  /** The names in a directory (`""` is the root). @throws ProcError */
  list(path: string): Promise<string[]>;
}

/** The kernel's clock ticks per second (USER_HZ), which /proc/stat counts in; 100 on Linux. */
export const CLOCK_TICKS = 100;
