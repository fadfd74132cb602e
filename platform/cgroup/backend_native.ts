/**
 * NativeCgroupBackend: plain file writes under a cgroup root. On a node that is
 * a cgroup v2 directory (`/sys/fs/cgroup/machined`) and the controllers are
 * enabled in each ancestor's `cgroup.subtree_control`. On a host that still
 * mounts v1 hierarchies (hybrid mode, as on some CI machines) the root may be a
 * v1 controller hierarchy such as `/sys/fs/cgroup/memory/machined`; the same
 * limits map to the v1 files that hierarchy has.
 * @module
 */
import { type CgroupBackend, CgroupError, type CgroupLimits, checkCgroupName } from "./backend.ts";

type Version = "v2" | "v1";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new CgroupError("read", path, e);
  }
}

async function write(path: string, value: string): Promise<void> {
  try {
    await Deno.writeTextFile(path, value);
  } catch (e) {
    throw new CgroupError("write", path, e, `${value}: ${(e as Error).message}`);
  }
}

/** Real cgroups under `root`. */
export class NativeCgroupBackend implements CgroupBackend {
  #version?: Promise<Version>;

  /** @param root the directory service cgroups are made in; created when missing. */
  constructor(readonly root: string) {}

  /** Whether `root`'s hierarchy is cgroup v2 or a v1 controller hierarchy. */
  version(): Promise<Version> {
    this.#version ??= (async () => {
      let dir = this.root;
      for (;;) {
        if (await exists(`${dir}/cgroup.controllers`)) return "v2";
        if (await exists(`${dir}/cgroup.procs`)) return "v1";
        const parent = dir.replace(/\/[^/]+$/, "") || "/";
        if (parent === dir) return "v2";
        dir = parent;
      }
    })();
    return this.#version;
  }

  async prepare(name: string, limits: CgroupLimits): Promise<string> {
    const path = this.#path(name);
    try {
      await Deno.mkdir(path, { recursive: true });
    } catch (e) {
      throw new CgroupError("mkdir", path, e);
    }
    const version = await this.version();
    if (version === "v2") {
      await this.#enableControllers(limits);
      await write(`${path}/memory.max`, String(limits.memoryMax ?? "max")).catch(
        skipUnlessSet(limits.memoryMax),
      );
      await write(`${path}/cpu.max`, limits.cpuMax ?? "max").catch(skipUnlessSet(limits.cpuMax));
      await write(`${path}/pids.max`, String(limits.pidsMax ?? "max")).catch(
        skipUnlessSet(limits.pidsMax),
      );
    } else {
      await this.#writeV1(path, limits);
    }
    return path;
  }

  async read(name: string): Promise<CgroupLimits> {
    const path = this.#path(name);
    if (!(await exists(path))) throw new CgroupError("read", path, new Deno.errors.NotFound());
    const out: CgroupLimits = {};
    const num = (s: string | undefined) => (s === undefined || s === "max" ? undefined : Number(s));
    if ((await this.version()) === "v2") {
      const mem = num(await readText(`${path}/memory.max`));
      if (mem !== undefined) out.memoryMax = mem;
      const cpu = await readText(`${path}/cpu.max`);
      if (cpu !== undefined && !cpu.startsWith("max")) out.cpuMax = cpu;
    } else {
      const mem = await readText(`${path}/memory.limit_in_bytes`);
      // v1 reports "no limit" as a huge page-rounded number.
      if (mem !== undefined && Number(mem) < 2 ** 62) out.memoryMax = Number(mem);
      const quota = await readText(`${path}/cpu.cfs_quota_us`);
      const period = await readText(`${path}/cpu.cfs_period_us`);
      if (quota !== undefined && quota !== "-1") out.cpuMax = `${quota} ${period}`;
    }
    const pids = num(await readText(`${path}/pids.max`));
    if (pids !== undefined) out.pidsMax = pids;
    return out;
  }

  async pids(name: string): Promise<number[]> {
    const text = await readText(`${this.#path(name)}/cgroup.procs`);
    return (text ?? "").split("\n").filter((l) => l !== "").map(Number);
  }

  async oomKills(name: string): Promise<number> {
    const path = this.#path(name);
    const events = await readText(`${path}/memory.events`);
    const v2 = /^oom_kill (\d+)$/m.exec(events ?? "");
    if (v2) return Number(v2[1]);
    const control = await readText(`${path}/memory.oom_control`);
    const v1 = /^oom_kill (\d+)$/m.exec(control ?? "");
    return v1 ? Number(v1[1]) : 0;
  }

  async remove(name: string): Promise<void> {
    const path = this.#path(name);
    try {
      await Deno.remove(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      throw new CgroupError("rmdir", path, e);
    }
  }

  #path(name: string): string {
    return `${this.root}/${checkCgroupName(name)}`;
  }

  /** Turns on the controllers the limits need in root's parent and in root (v2). */
  async #enableControllers(limits: CgroupLimits): Promise<void> {
    const wanted = [
      limits.memoryMax !== undefined ? "memory" : undefined,
      limits.cpuMax !== undefined ? "cpu" : undefined,
      limits.pidsMax !== undefined ? "pids" : undefined,
    ].filter((c): c is string => c !== undefined);
    if (wanted.length === 0) return;
    const parent = this.root.replace(/\/[^/]+$/, "") || "/";
    for (const dir of [parent, this.root]) {
      const available = (await readText(`${dir}/cgroup.controllers`) ?? "").split(" ");
      const enabled = (await readText(`${dir}/cgroup.subtree_control`) ?? "").split(" ");
      for (const c of wanted) {
        if (enabled.includes(c)) continue;
        if (!available.includes(c)) {
          throw new CgroupError(
            "enable",
            dir,
            new Error(`controller "${c}" is not available`),
          );
        }
        await write(`${dir}/cgroup.subtree_control`, `+${c}`);
      }
    }
  }

  async #writeV1(path: string, limits: CgroupLimits): Promise<void> {
    const has = (file: string) => exists(`${path}/${file}`);
    const need = (set: unknown, file: string) => {
      if (set !== undefined) {
        throw new CgroupError("write", `${path}/${file}`, new Error("not in this v1 hierarchy"));
      }
    };
    if (await has("memory.limit_in_bytes")) {
      await write(`${path}/memory.limit_in_bytes`, String(limits.memoryMax ?? -1));
    } else need(limits.memoryMax, "memory.limit_in_bytes");
    if (await has("cpu.cfs_quota_us")) {
      const [quota, period] = (limits.cpuMax ?? "max 100000").split(" ");
      await write(`${path}/cpu.cfs_period_us`, period);
      await write(`${path}/cpu.cfs_quota_us`, quota === "max" ? "-1" : quota);
    } else need(limits.cpuMax, "cpu.cfs_quota_us");
    if (await has("pids.max")) {
      await write(`${path}/pids.max`, String(limits.pidsMax ?? "max"));
    } else need(limits.pidsMax, "pids.max");
  }
}

/** Resetting an absent limit may fail when its controller is off; setting one may not. */
function skipUnlessSet(value: unknown): (e: unknown) => void {
  return (e) => {
    if (value !== undefined) throw e;
  };
}
