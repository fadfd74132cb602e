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

/** In-memory tree. */
export class FakeProcBackend implements ProcBackend {
  readonly files = new Map<string, string>();
  readonly links = new Map<string, string>();

  constructor(readonly root = "/proc") {}

  /** Writes (or replaces) a file. */
  setFile(path: string, text: string): this {
    this.files.set(path, text);
    return this;
  }

  /** Removes a file or a whole directory (e.g. a process that exited). */
  remove(path: string): void {
    for (const map of [this.files, this.links]) {
      for (const k of [...map.keys()]) if (k === path || k.startsWith(`${path}/`)) map.delete(k);
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
    for (const [fd, target] of Object.entries(p.fds ?? {})) this.links.set(`${d}/fd/${fd}`, target);
    if (!p.fds) this.files.set(`${d}/fd/.keep`, "");
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
    const prefix = path === "" ? "" : `${path}/`;
    const names = new Set<string>();
    for (const k of [...this.files.keys(), ...this.links.keys()]) {
      if (!k.startsWith(prefix)) continue;
      const name = k.slice(prefix.length).split("/")[0];
      if (name !== ".keep") names.add(name);
    }
    if (names.size === 0 && !this.#isDir(prefix)) return Promise.reject(this.#gone("list", path));
    return Promise.resolve([...names].sort());
  }

  #isDir(prefix: string): boolean {
    return prefix === "" || [...this.files.keys()].some((k) => k.startsWith(prefix));
  }

  #gone(op: "read" | "readlink" | "list", path: string): ProcError {
    return new ProcError(op, `${this.root}/${path}`, true, new Deno.errors.NotFound(path));
  }
}
