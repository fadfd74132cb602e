/**
 * The mount backend: mount, unmount (lazily when busy), read-only remounts,
 * bind mounts, and the current table. Used by the volume and rootfs
 * controllers; the fake keeps a mount table in memory.
 * @module
 */
import type { MountInfo } from "./mountinfo.ts";

/** mount(2) flag names understood by native-ops. */
export type MountFlag =
  | "ro"
  | "nosuid"
  | "nodev"
  | "noexec"
  | "sync"
  | "remount"
  | "dirsync"
  | "noatime"
  | "nodiratime"
  | "bind"
  | "move"
  | "rec"
  | "silent"
  | "unbindable"
  | "private"
  | "slave"
  | "shared"
  | "relatime"
  | "strictatime"
  | "lazytime";

/** One mount(2) call. */
export interface MountRequest {
  /** Device, path or a label for pseudo filesystems (e.g. `"tmpfs"`). */
  source?: string;
  target: string;
  fstype?: string;
  flags?: MountFlag[];
  /** Filesystem options, e.g. `"size=64m,mode=0755"`. */
  data?: string;
}

/** How an unmount went: at once, or lazily detached because it was busy. */
export type UnmountResult = "clean" | "detached";

/**
 * Mount table changes.
 *
 * Idempotence: `mount` and `bind` are not idempotent (a second call stacks
 * another mount); check {@link MountBackend.mounts} first. `unmount` of a
 * path that is not a mount point fails with EINVAL. `remountReadOnly` is
 * idempotent.
 */
export interface MountBackend {
  /** @throws SysError (ENOENT for a missing target, EBUSY, EINVAL, ...) */
  mount(req: MountRequest): Promise<void>;
  /**
   * Unmount; when busy and `detach` is set, detach lazily instead of failing.
   * @throws SysError EINVAL when `target` is not a mount point; EBUSY without `detach`.
   */
  unmount(target: string, options?: { detach?: boolean }): Promise<UnmountResult>;
  /**
   * Make the mount at `target` read-only, keeping nosuid/nodev/noexec/atime
   * flags. With `bindOnly`, only this mount point (not the shared superblock).
   */
  remountReadOnly(target: string, options?: { bindOnly?: boolean }): Promise<void>;
  /** Bind `source` onto `target`, optionally recursive and read-only. */
  bind(
    source: string,
    target: string,
    options?: { recursive?: boolean; readOnly?: boolean },
  ): Promise<void>;
  /** The current mount table of this process's mount namespace. */
  mounts(): Promise<MountInfo[]>;
}
