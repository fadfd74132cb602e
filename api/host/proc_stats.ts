/** Figures read from /proc for boot reports: uptime and resident memory. */

/** Seconds since the kernel started (/proc/uptime), or undefined off Linux. */
export async function uptimeSeconds(): Promise<number | undefined> {
  try {
    return Number((await Deno.readTextFile("/proc/uptime")).split(" ")[0]);
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in KiB (VmRSS), or undefined when unreadable. */
export async function rssKiB(pid: number | "self" = "self"): Promise<number | undefined> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
