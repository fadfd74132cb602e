/**
 * The Observer's reports that read more than /proc/PID: mounts with their
 * use, service cgroups, and sockets with their process.
 * @module
 */
import { parseMountInfo } from "../platform/mount/mod.ts";
import {
  type CgroupStats,
  type FsUsage,
  type FsUsageReader,
  parseCgroupV2,
  type ProcBackend,
  readCgroupStats,
  readSockets,
  type SocketInfo,
  socketOwners,
} from "../platform/procfs/mod.ts";

/** One mount with its filesystem's use (absent when it could not be read). */
export interface MountReport {
  readonly source: string;
  readonly target: string;
  readonly fstype: string;
  readonly options: string;
  readonly usage?: FsUsage;
}

/** Every mount of machined's mount namespace, in mount order. @throws ProcError */
export async function readMounts(
  proc: ProcBackend,
  usage: FsUsageReader | undefined,
): Promise<MountReport[]> {
  const mounts = parseMountInfo(await proc.readText("self/mountinfo"));
  return await Promise.all(mounts.map(async (m) => {
    const target = m.mountPoint;
    const options = [...new Set([...m.options, ...m.superOptions])].join(",");
    const base = { source: m.source, target, fstype: m.fstype, options };
    if (!usage) return base;
    // A mount that cannot be measured (gone, no permission) is still listed.
    const u = await usage(target).catch(() => undefined);
    return u ? { ...base, usage: u } : base;
  }));
}

/** A cgroup and whose it is. */
export interface CgroupReport extends CgroupStats {
  readonly owner: string;
}

/**
 * machined's own cgroup (unless it is the root cgroup, which has no counters
 * of its own), then each service's that exists, by owner.
 * @param cgroups a backend rooted at /sys/fs/cgroup
 * @param serviceRoot where service cgroups live, e.g. `/machined`
 */
export async function readServiceCgroups(
  proc: ProcBackend,
  cgroups: ProcBackend,
  serviceIds: readonly string[],
  serviceRoot: string,
): Promise<CgroupReport[]> {
  const out: CgroupReport[] = [];
  const own = parseCgroupV2(await proc.readText("self/cgroup").catch(() => ""));
  // The root cgroup (PID 1 on a node) has no memory.current or pids.current of its own.
  const entries: [string, string][] = [
    ...(own === "" || own === "/"
      ? []
      : [["machined", own.replace(/^\//, "")] as [string, string]]),
    ...serviceIds.map((id): [string, string] => [id, `${serviceRoot.replace(/^\//, "")}/${id}`]),
  ];
  for (const [owner, path] of entries) {
    const stats = await readCgroupStats(cgroups, path);
    if (stats) out.push({ ...stats, owner });
  }
  return out.sort((a, b) => a.owner.localeCompare(b.owner));
}

/** A socket and the process holding it (pid 0: not found). */
export interface SocketReport extends SocketInfo {
  readonly pid: number;
}

/** Every TCP/UDP socket with the pid holding it. @throws ProcError */
export async function readSocketReport(proc: ProcBackend): Promise<SocketReport[]> {
  const [sockets, owners] = await Promise.all([readSockets(proc), socketOwners(proc)]);
  return sockets.map((s) => ({ ...s, pid: owners.get(s.inode) ?? 0 }));
}
