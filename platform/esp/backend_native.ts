/**
 * The real ESP: the vfat partition mounted at a private mount point for the
 * length of one call, read-only for {@link read}, `rw,dirsync` for
 * {@link write} (dirsync makes each directory change, such as a rename,
 * synchronous on FAT), and unmounted after either, so the ESP is never left
 * writable and a re-read after a remount comes from the disk, not the page
 * cache. machined-init unmounts the ESP after attaching the booted root image
 * (a loop device over its byte range of the disk), so the mount here is
 * usually the only one; the booted slot's files are never opened for writing.
 *
 * A fragmented root image is attached file-backed instead, and its loop
 * device keeps the ESP's superblock alive and read-only: a read-write mount
 * of the partition is then EBUSY (a bless failed so in QEMU). A write session
 * then mounts read-only (sharing that superblock), remounts read-write for
 * the session and read-only again before unmounting, so the superblock is
 * never left writable. Reads in that state share the superblock's page cache.
 */
import type { MountBackend, MountFlag } from "../mount/mod.ts";
import { isSysError } from "../../native-ops/mod.ts";
import type { EspBackend, EspFiles } from "./backend.ts";
import { DirEspFiles } from "./dir_files.ts";

/** Where the ESP is mounted while in use. */
export const ESP_MOUNT_POINT = "/run/machined/esp";

const OPTIONS = "codepage=437,iocharset=utf8";

/**
 * How long a session waits for the ESP to be discovered: a rollback or upgrade asked for right
 * after boot can come before disk discovery has published the ESP (CI's Secure Boot case did).
 */
export const ESP_DISCOVERY_WAIT_MS = 30_000;
const ESP_DISCOVERY_POLL_MS = 250;

/** See the module doc. */
export class NativeEspBackend implements EspBackend {
  #busy: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly mounts: MountBackend,
    /** The ESP's device node (`/dev/vda1`), found from DiscoveredVolume. */
    private readonly device: () => string | undefined,
    private readonly mountPoint = ESP_MOUNT_POINT,
    private readonly discoveryWaitMs = ESP_DISCOVERY_WAIT_MS,
  ) {}

  read<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    return this.#session(false, fn);
  }

  write<T>(fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    return this.#session(true, fn);
  }

  /** One mount at a time: sessions queue. */
  #session<T>(writable: boolean, fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    const run = this.#busy.then(() => this.#mounted(writable, fn));
    this.#busy = run.catch(() => {});
    return run;
  }

  /** The ESP's device, waiting (bounded, monotonic) for discovery to publish it. */
  async #discovered(): Promise<string | undefined> {
    const start = performance.now();
    for (;;) {
      const dev = this.device();
      if (dev || performance.now() - start >= this.discoveryWaitMs) return dev;
      await new Promise((r) => setTimeout(r, ESP_DISCOVERY_POLL_MS));
    }
  }

  async #mounted<T>(writable: boolean, fn: (fs: EspFiles) => Promise<T>): Promise<T> {
    const dev = await this.#discovered();
    if (!dev) {
      throw new Deno.errors.NotFound(
        `no EFI System Partition was discovered (waited ${this.discoveryWaitMs / 1000} s)`,
      );
    }
    await Deno.mkdir(this.mountPoint, { recursive: true });
    const shared = await this.#mount(dev, writable);
    try {
      return await fn(new DirEspFiles(this.mountPoint));
    } finally {
      try {
        if (shared) await this.mounts.remountReadOnly(this.mountPoint);
      } finally {
        await this.mounts.unmount(this.mountPoint, { detach: true });
      }
    }
  }

  /**
   * Mounts the ESP at the mount point; true when a write session had to go
   * through a read-only mount of a superblock held elsewhere and a remount.
   */
  async #mount(dev: string, writable: boolean): Promise<boolean> {
    const mount = (flags: MountFlag[]) =>
      this.mounts.mount({
        source: dev,
        target: this.mountPoint,
        fstype: "vfat",
        flags: [...flags, "nosuid", "nodev", "noexec"],
        data: OPTIONS,
      });
    if (!writable) {
      await mount(["ro"]);
      return false;
    }
    try {
      await mount(["dirsync"]);
      return false;
    } catch (e) {
      if (!isSysError(e, "EBUSY")) throw e;
    }
    await mount(["ro"]);
    try {
      await mount(["remount", "dirsync"]);
    } catch (e) {
      await this.mounts.unmount(this.mountPoint, { detach: true }).catch(() => {});
      throw e;
    }
    return true;
  }
}
