/**
 * FakeCgroupBackend: cgroups as a map, with the same idempotence as the real
 * one; tests inject failures through {@link FaultInjector} (op names
 * `prepare`, `remove`) and place fake pids to make `remove` fail with EBUSY.
 * @module
 */
import { FaultInjector } from "../mod.ts";
import { type CgroupBackend, CgroupError, type CgroupLimits, checkCgroupName } from "./backend.ts";

/** In-memory cgroups. */
export class FakeCgroupBackend implements CgroupBackend {
  readonly faults = new FaultInjector();
  /** Existing cgroups by name. */
  readonly groups = new Map<string, { limits: CgroupLimits; pids: number[]; oomKills: number }>();

  constructor(readonly root = "/sys/fs/cgroup/machined") {}

  prepare(name: string, limits: CgroupLimits): Promise<string> {
    return this.#try(() => {
      checkCgroupName(name);
      this.faults.check("prepare", [name, limits]);
      const g = this.groups.get(name) ?? { limits: {}, pids: [], oomKills: 0 };
      g.limits = { ...clean(limits) };
      this.groups.set(name, g);
      return `${this.root}/${name}`;
    });
  }

  read(name: string): Promise<CgroupLimits> {
    return this.#try(() => {
      const g = this.groups.get(name);
      if (!g) throw new CgroupError("read", `${this.root}/${name}`, new Error("No such file"));
      return { ...g.limits };
    });
  }

  pids(name: string): Promise<number[]> {
    return Promise.resolve([...(this.groups.get(name)?.pids ?? [])]);
  }

  oomKills(name: string): Promise<number> {
    return Promise.resolve(this.groups.get(name)?.oomKills ?? 0);
  }

  remove(name: string): Promise<void> {
    return this.#try(() => {
      this.faults.check("remove", [name]);
      const g = this.groups.get(name);
      if (g && g.pids.length > 0) {
        throw new CgroupError(
          "rmdir",
          `${this.root}/${name}`,
          new Error("Device or resource busy"),
        );
      }
      this.groups.delete(name);
    });
  }

  #try<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

function clean(l: CgroupLimits): CgroupLimits {
  const out: CgroupLimits = {};
  if (l.memoryMax !== undefined) out.memoryMax = l.memoryMax;
  if (l.cpuMax !== undefined) out.cpuMax = l.cpuMax;
  if (l.pidsMax !== undefined) out.pidsMax = l.pidsMax;
  return out;
}
