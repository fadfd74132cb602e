/**
 * Which component a process belongs to: machined, apid, or a service. A
 * service's processes are found by its cgroup (`/machined/<id>` on a node,
 * where the supervisor gives each service one) and, where there are no
 * per-service cgroups (dev mode), by descent from the service's main pid.
 * @module
 */

/** A process as ownership needs it. */
export interface OwnedProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly cgroup: string;
}

/** What is known about the node's components. */
export interface OwnerHints {
  /** Named components by pid: `machined`, `apid`. */
  readonly components: ReadonlyMap<number, string>;
  /** Each service's main pid (when running). */
  readonly services: readonly { readonly id: string; readonly pid: number | null }[];
  /** The cgroup path under which each service has its own directory. @default "/machined" */
  readonly serviceCgroupRoot?: string;
}

/**
 * The owner of every process (`""` for none): its own name when it is a
 * component or a service's main pid, else its service cgroup, else its
 * nearest ancestor's owner. Pure; linear in the number of processes.
 */
export function assignOwners(
  processes: readonly OwnedProcess[],
  hints: OwnerHints,
): Map<number, string> {
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const ids = new Set(hints.services.map((s) => s.id));
  const direct = new Map<number, string>(hints.components);
  for (const s of hints.services) if (s.pid !== null) direct.set(s.pid, s.id);
  const root = `${hints.serviceCgroupRoot ?? "/machined"}/`;
  const owners = new Map<number, string>();
  const resolve = (pid: number, depth: number): string => {
    const known = owners.get(pid);
    if (known !== undefined) return known;
    const p = byPid.get(pid);
    let owner = direct.get(pid) ?? "";
    if (owner === "" && p?.cgroup.startsWith(root)) {
      const id = p.cgroup.slice(root.length).split("/")[0];
      if (ids.has(id)) owner = id;
    }
    if (owner === "" && p && p.ppid > 1 && p.ppid !== pid && depth < 256) {
      owner = resolve(p.ppid, depth + 1);
    }
    owners.set(pid, owner);
    return owner;
  };
  for (const p of processes) resolve(p.pid, 0);
  return owners;
}
