/**
 * An in-memory tree of what the initramfs will hold, filled from data and
 * from host files. Host paths are mirrored with their symlinks (so
 * `/lib64/ld-linux-x86-64.so.2` keeps working on a usrmerged Debian), parent
 * directories appear on their own, and entries below a recorded symlink are
 * stored at the symlink's target so that the archive never holds both.
 */
import type { CpioEntry, CpioOwner } from "../cpio.ts";
import { run } from "../run.ts";

/** Adding a path that clashes with an existing entry of another kind. */
export class RootfsConflictError extends Error {
  override name = "RootfsConflictError";
  constructor(readonly path: string, readonly existing: string, readonly added: string) {
    super(`Initramfs path "${path}" is already a ${existing}, cannot add a ${added}`);
  }
}

const MAX_SYMLINK_HOPS = 40;

/**
 * Where {@link Rootfs.binary} finds a binary's libraries: the build host's
 * own (`ldd`, {@link HOST_LIBRARIES}), or a foreign architecture's sysroot.
 */
export interface LibrarySource {
  /** The host directory node paths are read from ("" for the host itself). */
  root: string;
  /** The loader and libraries the host file `binary` needs, as node paths. */
  libraries(binary: string): Promise<string[]>;
}

/** The build host's libraries, as `ldd` lists them. */
export const HOST_LIBRARIES: LibrarySource = { root: "", libraries: sharedLibraries };

/** Builds the list of {@link CpioEntry} for the initramfs. */
export class Rootfs {
  #entries = new Map<string, CpioEntry>();

  /** Every entry, in no particular order (the cpio writer sorts). */
  entries(): CpioEntry[] {
    return [...this.#entries.values()];
  }

  /** The entry at `path`, after resolving recorded symlinks in its parents. */
  get(path: string): CpioEntry | undefined {
    return this.#entries.get(this.#canonical(normalise(path)));
  }

  /** Add a directory and its parents. Idempotent. */
  dir(path: string, mode = 0o755): void {
    const p = this.#canonical(normalise(path));
    if (p !== "/") this.dir(dirname(p));
    const old = this.#entries.get(p);
    if (old?.type === "dir") return;
    if (old) throw new RootfsConflictError(p, old.type, "dir");
    this.#entries.set(p, { type: "dir", path: p, mode });
  }

  /** Add a file with inline bytes (or a text string). Replaces an earlier file. */
  file(path: string, data: Uint8Array | string, mode = 0o644): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    this.#put({ type: "file", path: normalise(path), data: bytes, mode });
  }

  /** Add a file whose bytes are read from `source` on the host when the archive is written. */
  copy(path: string, source: string, mode = 0o644): void {
    this.#put({ type: "file", path: normalise(path), source, mode });
  }

  /**
   * Give the directory or file at `path` an owner other than root (a cache
   * directory an unprivileged process writes).
   * @throws Deno.errors.NotFound when nothing (or only a link or device) is there.
   */
  chown(path: string, owner: CpioOwner): void {
    const p = this.#canonical(normalise(path));
    const e = this.#entries.get(p);
    if (e?.type !== "dir" && e?.type !== "file") {
      throw new Deno.errors.NotFound(`No initramfs file or directory at "${p}" to chown`);
    }
    this.#entries.set(p, { ...e, uid: owner.uid, gid: owner.gid });
  }

  /** Add a symbolic link. */
  symlink(path: string, target: string): void {
    this.#put({ type: "symlink", path: normalise(path), target });
  }

  /** Add a character device node. */
  charDev(path: string, major: number, minor: number, mode = 0o600): void {
    this.#put({ type: "chardev", path: normalise(path), major, minor, mode });
  }

  /**
   * Mirror the host path `hostPath` at the same place, recreating every
   * symlink met on the way (directories and the file itself), with the
   * file's own permission bits. With `root`, the path is read below that host
   * directory (a sysroot) and absolute symlinks resolve inside it.
   * @throws Deno.errors.NotFound when the host path does not exist.
   */
  async mirror(hostPath: string, root = ""): Promise<void> {
    let pending = normalise(hostPath).split("/").filter(Boolean);
    let at = "/";
    for (let hops = 0; pending.length > 0;) {
      const next = join(at, pending.shift()!);
      const st = await Deno.lstat(root + next);
      if (st.isSymlink) {
        if (++hops > MAX_SYMLINK_HOPS) throw new Deno.errors.FilesystemLoop(next);
        const target = await Deno.readLink(root + next);
        this.symlink(next, target);
        const resolved = target.startsWith("/") ? target : join(at, target);
        pending = [...normalise(resolved).split("/").filter(Boolean), ...pending];
        at = "/";
      } else if (st.isDirectory) {
        this.dir(next, (st.mode ?? 0o755) & 0o7777);
        at = next;
      } else {
        this.copy(next, root + next, (st.mode ?? 0o644) & 0o7777);
        at = next;
      }
    }
  }

  /**
   * Add the host binary `source` at `dest` and mirror the shared libraries
   * and dynamic loader it needs, found by `libs` (the host's `ldd` by
   * default). A static binary adds no libraries.
   * @throws CommandError when ldd fails for another reason than a static binary.
   */
  async binary(
    dest: string,
    source: string,
    mode = 0o755,
    libs: LibrarySource = HOST_LIBRARIES,
  ): Promise<string[]> {
    const real = await Deno.realPath(source);
    this.copy(dest, real, mode);
    const found = await libs.libraries(real);
    for (const lib of found) await this.mirror(lib, libs.root);
    return found;
  }

  #put(entry: CpioEntry): void {
    const p = this.#canonical(entry.path);
    this.dir(dirname(p));
    const old = this.#entries.get(p);
    if (old && old.type !== entry.type) throw new RootfsConflictError(p, old.type, entry.type);
    if (old?.type === "symlink" && entry.type === "symlink" && old.target !== entry.target) {
      throw new RootfsConflictError(
        p,
        `symlink to "${old.target}"`,
        `symlink to "${entry.target}"`,
      );
    }
    this.#entries.set(p, { ...entry, path: p });
  }

  /** Rewrite `path` through any recorded symlink among its parents. */
  #canonical(path: string): string {
    const parts = path.split("/").filter(Boolean);
    let at = "/";
    for (let i = 0, hops = 0; i < parts.length; i++) {
      const next = join(at, parts[i]);
      const e = this.#entries.get(next);
      if (e?.type === "symlink" && i < parts.length - 1) {
        if (++hops > MAX_SYMLINK_HOPS) throw new Deno.errors.FilesystemLoop(path);
        const target = e.target.startsWith("/") ? e.target : join(at, e.target);
        return this.#canonical(normalise(join(target, parts.slice(i + 1).join("/"))));
      }
      at = next;
    }
    return at;
  }
}

/**
 * The shared libraries (and the dynamic loader) `ldd` resolves for `binary`,
 * as host paths. Empty for a static binary.
 * @throws CommandError when ldd fails for another reason.
 */
export async function sharedLibraries(binary: string): Promise<string[]> {
  let out: string;
  try {
    out = await run("ldd", [binary]);
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    if (/not a dynamic executable|statically linked/.test(err.stderr ?? err.message)) return [];
    throw e;
  }
  return parseLdd(out);
}

/** Parse `ldd` output into library paths (the vDSO has none and is left out). */
export function parseLdd(out: string): string[] {
  const libs: string[] = [];
  for (const line of out.split("\n")) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(0x/.exec(line);
    if (m && !libs.includes(m[1])) libs.push(m[1]);
  }
  return libs.sort();
}

function normalise(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return "/" + out.join("/");
}

function join(a: string, b: string): string {
  return normalise(`${a}/${b}`);
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}
