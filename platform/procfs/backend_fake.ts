/**
 * FakeProcBackend: a tree of files and symlinks in memory, with a seeder for
 * whole processes, so parsers and the observer run without a real /proc.
 * @module
 */
import { type ProcBackend, ProcError } from "./backend.ts";

/** A process as {@link FakeProcBackend.addProcess} writes it. */
export interface FakeProcess {
  pid: number;
  ppid?: number;
  comm?: string;
  /** argv; written NUL-separated to `cmdline`. */
  argv?: string[];
  state?: string;
  threads?: number;
  /** CPU time in clock ticks. */
  utime?: number;
  stime?: number;
  /** Start time in ticks after boot. */
  startTicks?: number;
  rssKb?: number;
  /** Absent leaves smaps_rollup out (as for another user's process without root). */
  pssKb?: number;
  /** The cgroup v2 path, e.g. `/machined/web`. @default "/" */
  cgroup?: string;
  /** fd number → link target (`socket:[123]`). */
  fds?: Record<number, string>;
  uid?: number;
}

/** In-memory tree, indexed by directory so listing is as cheap as on a real /proc. */
export class FakeProcBackend implements ProcBackend {
  readonly files = new Map<string, string>();
  readonly links = new Map<string, string>();
  /** Directory → the names in it. */
  readonly #children = new Map<string, Set<string>>([["", new Set()]]);

  constructor(readonly root = "/proc") {}

  /** Writes (or replaces) a file. */
  setFile(path: string, text: string): this {
    this.files.set(path, text);
    this.#index(path);
    return this;
  }

  /** Writes (or replaces) a symlink. */
  setLink(path: string, target: string): this {
    this.links.set(path, target);
    this.#index(path);
    return this;
  }

  /** Removes a file or a whole directory (e.g. a process that exited). */
  remove(path: string): void {
    for (const child of this.#children.get(path) ?? []) this.remove(`${path}/${child}`);
    this.#children.delete(path);
    this.files.delete(path);
    this.links.delete(path);
    const slash = path.lastIndexOf("/");
    const parent = slash < 0 ? "" : path.slice(0, slash);
    const siblings = this.#children.get(parent);
    siblings?.delete(path.slice(slash + 1));
    if (siblings?.size === 0 && parent !== "") this.remove(parent);
  }

  #index(path: string): void {
    const parts = path.split("/");
    let dir = "";
    for (const part of parts) {
      let names = this.#children.get(dir);
      if (!names) this.#children.set(dir, names = new Set());
      names.add(part);
      dir = dir === "" ? part : `${dir}/${part}`;
    }
  }

  /** Writes the files of one process the way the kernel shows them. */
  addProcess(p: FakeProcess): this {
    const d = String(p.pid);
    this.remove(d);
    const comm = p.comm ?? "proc";
    const f = [
      p.state ?? "S",
      p.ppid ?? 0,
      p.pid,
      p.pid,
      0,
      -1,
      0,
      0,
      0,
      0,
      0,
      p.utime ?? 0,
      p.stime ?? 0,
      0,
      0,
      20,
      0,
      p.threads ?? 1,
      0,
      p.startTicks ?? 0,
      (p.rssKb ?? 0) * 1024 * 4,
      (p.rssKb ?? 0) / 4,
    ];
    this.setFile(`${d}/stat`, `${p.pid} (${comm}) ${f.join(" ")} 0 0 0\n`);
    this.setFile(`${d}/comm`, `${comm}\n`);
    this.setFile(`${d}/cmdline`, (p.argv ?? []).map((a) => `${a}\0`).join(""));
    this.setFile(
      `${d}/status`,
      `Name:\t${comm}\nState:\t${p.state ?? "S"}\nPPid:\t${p.ppid ?? 0}\n` +
        `Uid:\t${p.uid ?? 0}\t${p.uid ?? 0}\t${p.uid ?? 0}\t${p.uid ?? 0}\n` +
        `VmRSS:\t${p.rssKb ?? 0} kB\nThreads:\t${p.threads ?? 1}\n`,
    );
    this.setFile(`${d}/cgroup`, `0::${p.cgroup ?? "/"}\n`);
    if (p.pssKb !== undefined) {
      this.setFile(
        `${d}/smaps_rollup`,
        `00400000-7fff [rollup]\nRss: ${p.rssKb ?? 0} kB\nPss: ${p.pssKb} kB\n`,
      );
    }
    for (const [fd, target] of Object.entries(p.fds ?? {})) this.setLink(`${d}/fd/${fd}`, target);
    if (!p.fds) this.setFile(`${d}/fd/.keep`, "");
    return this;
  }

  readText(path: string): Promise<string> {
    const text = this.files.get(path);
    if (text === undefined) return Promise.reject(this.#gone("read", path));
    return Promise.resolve(text);
  }

  readLink(path: string): Promise<string> {
    const target = this.links.get(path);
    if (target === undefined) return Promise.reject(this.#gone("readlink", path));
    return Promise.resolve(target);
  }

  list(path: string): Promise<string[]> {
    const names = this.#children.get(path);
    if (!names || this.files.has(path)) return Promise.reject(this.#gone("list", path));
    return Promise.resolve([...names].filter((n) => n !== ".keep").sort());
  }

  #gone(op: "read" | "readlink" | "list", path: string): ProcError {
    return new ProcError(op, `${this.root}/${path}`, true, new Deno.errors.NotFound(path));
  }
}
