/**
 * FakeMountBackend: a mount table in memory with the kernel's answers for the
 * common failures: ENOENT for a missing target, EINVAL for unmounting a
 * non-mount-point, EBUSY for a busy one (unless detached). Tests seed
 * directories and busy paths and inspect {@link FakeMountBackend.table}.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import { FaultInjector } from "../mod.ts";
import type { MountBackend, MountRequest, UnmountResult } from "./backend.ts";
import type { MountInfo } from "./mountinfo.ts";

function sysError(op: string, code: string, detail: string): SysError {
  return new SysError(op, errnoValue(code), detail);
}

const PER_MOUNT = ["nosuid", "nodev", "noexec", "noatime", "nodiratime", "relatime"] as const;

/** The in-memory mount backend. */
export class FakeMountBackend implements MountBackend {
  readonly faults = new FaultInjector();
  /** The mount table, oldest first (the last entry on a path is the visible one). */
  readonly table: MountInfo[] = [];
  #dirs = new Set<string>(["/"]);
  #busy = new Set<string>();
  #nextId = 100;

  constructor() {
    this.table.push(this.#entry("/", "rootfs", "/dev/root", "/", ["rw"], ["rw"]));
  }

  /** Declare that a directory exists (mount targets must). */
  addDirectory(path: string): this {
    this.#dirs.add(path);
    return this;
  }

  /** Make unmounting `path` fail with EBUSY until the returned release is called. */
  markBusy(path: string): () => void {
    this.#busy.add(path);
    return () => this.#busy.delete(path);
  }

  #entry(
    mountPoint: string,
    fstype: string,
    source: string,
    root: string,
    options: string[],
    superOptions: string[],
  ): MountInfo {
    const id = this.#nextId++;
    return {
      id,
      parentId: this.#top(mountPoint)?.id ?? 1,
      major: 0,
      minor: id,
      root,
      mountPoint,
      options,
      optionalFields: [],
      fstype,
      source,
      superOptions,
    };
  }

  /** The visible mount at exactly `path`. */
  #top(path: string): MountInfo | undefined {
    return this.table.findLast((m) => m.mountPoint === path);
  }

  /** The mount that contains `path`. */
  #containing(path: string): MountInfo {
    let best = this.table[0];
    for (const m of this.table) {
      const prefix = m.mountPoint === "/" ? "/" : m.mountPoint + "/";
      if (
        (path === m.mountPoint || path.startsWith(prefix)) &&
        m.mountPoint.length >= best.mountPoint.length
      ) {
        best = m;
      }
    }
    return best;
  }

  #requireDir(op: string, path: string): void {
    if (!this.#dirs.has(path) && !this.#top(path)) throw sysError(op, "ENOENT", path);
  }

  mount(req: MountRequest): Promise<void> {
    try {
      this.faults.check("mount", [req]);
      const flags = new Set(req.flags ?? []);
      if (flags.has("bind")) {
        return this.bind(req.source ?? "", req.target, { recursive: flags.has("rec") });
      }
      if (flags.has("remount")) return this.#remount(req.target, flags);
      this.#requireDir("mount", req.target);
      if (!req.fstype) throw sysError("mount", "EINVAL", req.target);
      const options = [flags.has("ro") ? "ro" : "rw", ...PER_MOUNT.filter((f) => flags.has(f))];
      const superOptions = [
        flags.has("ro") ? "ro" : "rw",
        ...(req.data ? req.data.split(",") : []),
      ];
      this.table.push(
        this.#entry(req.target, req.fstype, req.source ?? "none", "/", options, superOptions),
      );
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  unmount(target: string, options: { detach?: boolean } = {}): Promise<UnmountResult> {
    try {
      this.faults.check("umount2", [target, options]);
      const top = this.#top(target);
      if (!top || target === "/") {
        throw sysError("umount2", this.#dirs.has(target) || top ? "EINVAL" : "ENOENT", target);
      }
      const busy = this.#busy.has(target);
      if (busy && !options.detach) throw sysError("umount2", "EBUSY", target);
      this.table.splice(this.table.indexOf(top), 1);
      return Promise.resolve(busy ? "detached" : "clean");
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** MS_REMOUNT: the mount at `target` and its superblock take `flags` (rw unless `ro`). */
  #remount(target: string, flags: Set<string>): Promise<void> {
    const top = this.#top(target);
    if (!top) throw sysError("mount", this.#dirs.has(target) ? "EINVAL" : "ENOENT", target);
    const mode = flags.has("ro") ? "ro" : "rw";
    top.options = [mode, ...PER_MOUNT.filter((f) => flags.has(f))];
    for (const m of this.table) {
      if (m.minor === top.minor) {
        m.superOptions = [mode, ...m.superOptions.filter((o) => o !== "rw" && o !== "ro")];
      }
    }
    return Promise.resolve();
  }

  remountReadOnly(target: string, options: { bindOnly?: boolean } = {}): Promise<void> {
    try {
      this.faults.check("remount", [target, options]);
      const top = this.#top(target);
      if (!top) throw sysError("mount", this.#dirs.has(target) ? "EINVAL" : "ENOENT", target);
      const ro = (opts: string[]) => ["ro", ...opts.filter((o) => o !== "rw" && o !== "ro")];
      top.options = ro(top.options);
      if (!options.bindOnly) {
        // The superblock is shared by every mount of it.
        for (const m of this.table) {
          if (m.minor === top.minor) {
            m.superOptions = ro(m.superOptions);
            m.options = ro(m.options);
          }
        }
      }
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  bind(
    source: string,
    target: string,
    options: { recursive?: boolean; readOnly?: boolean } = {},
  ): Promise<void> {
    try {
      this.faults.check("bind", [source, target, options]);
      this.#requireDir("mount", source);
      this.#requireDir("mount", target);
      const from = this.#containing(source);
      const rel = source.slice(from.mountPoint === "/" ? 0 : from.mountPoint.length) || "/";
      const root = from.root === "/" ? rel : `${from.root}${rel === "/" ? "" : rel}`;
      const entry = this.#entry(target, from.fstype, from.source, root, [...from.options], [
        ...from.superOptions,
      ]);
      entry.minor = from.minor; // same superblock
      if (options.readOnly) entry.options = ["ro", ...entry.options.filter((o) => o !== "rw")];
      this.table.push(entry);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  mounts(): Promise<MountInfo[]> {
    return Promise.resolve(this.table.map((m) => ({ ...m })));
  }
}
