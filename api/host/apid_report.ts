/**
 * One console line saying what the running apid (machined-edge) is allowed:
 * its program, user, effective capabilities, no_new_privs, cgroup and that
 * cgroup's memory limit, read from /proc as the kernel sees them. The QEMU
 * tier asserts it (e2e/node_boot_test.ts), so "unprivileged, in its own
 * cgroup with a memory limit" is checked on a booted node, not assumed from
 * the ProcessSpec.
 */

/** What /proc says about one process. */
export interface ProcessPrivileges {
  readonly exe: string;
  readonly uid: number;
  /** CapEff as the kernel prints it (16 hex digits). */
  readonly capEff: string;
  readonly noNewPrivs: boolean;
  /** The cgroup v2 path (`0::/system/apid` → `/system/apid`). */
  readonly cgroup: string;
  /** memory.max of that cgroup: bytes, or `max`. */
  readonly memoryMax: string;
}

/**
 * The fields of /proc/PID/status and /proc/PID/cgroup this report needs.
 * Pure. @throws RangeError when a field is missing (not a Linux status file).
 */
export function parsePrivileges(
  status: string,
  cgroupFile: string,
): Omit<ProcessPrivileges, "exe" | "memoryMax"> {
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s*(.+)$`, "m").exec(status);
    if (!m) throw new RangeError(`/proc status has no ${name} line`);
    return m[1].trim();
  };
  const cgroup = /^0::(\S+)$/m.exec(cgroupFile)?.[1];
  if (cgroup === undefined) throw new RangeError("/proc cgroup has no cgroup v2 line");
  return {
    uid: Number(field("Uid").split(/\s+/)[1]),
    capEff: field("CapEff"),
    noNewPrivs: field("NoNewPrivs") === "1",
    cgroup,
  };
}

/** The console line for `p`. Pure. */
export function formatPrivileges(pid: number, p: ProcessPrivileges): string {
  return `machined: apid pid=${pid} exe=${p.exe} uid=${p.uid} cap_eff=${p.capEff} ` +
    `no_new_privs=${p.noNewPrivs ? 1 : 0} cgroup=${p.cgroup} memory_max=${p.memoryMax}`;
}

/**
 * Reads `pid`'s privileges from `proc` (and its memory limit under
 * `cgroupRoot`). @throws when the process is gone or /proc is not Linux's.
 */
export async function readPrivileges(
  pid: number,
  proc = "/proc",
  cgroupRoot = "/sys/fs/cgroup",
): Promise<ProcessPrivileges> {
  const base = parsePrivileges(
    await Deno.readTextFile(`${proc}/${pid}/status`),
    await Deno.readTextFile(`${proc}/${pid}/cgroup`),
  );
  const memoryMax = await Deno.readTextFile(`${cgroupRoot}${base.cgroup}/memory.max`)
    .then((t) => t.trim(), () => "unknown");
  return { ...base, exe: await Deno.readLink(`${proc}/${pid}/exe`), memoryMax };
}
