/**
 * The node's memory as the QEMU cases report it (issue 27: the node must fit
 * the 512 MiB boards): MemTotal and MemAvailable from `machinectl memory`,
 * and the OOM kills every cgroup counts (`machinectl cgroups`), so a case run
 * at 512 MiB shows what was left and that nothing had to be killed for it.
 *
 * @module
 */
import { machinectl } from "./helpers.ts";

/** `machinectl memory -o json`, parsed. */
export interface MemoryDoc {
  meminfo: { totalBytes: number | string; availableBytes: number | string };
  owners: Array<{ owner: string }>;
  processes: Array<{ pid: number; owner: string; rssBytes: number; pssBytes: number }>;
}

/**
 * `machinectl memory -o json`; a call apid did not answer (it restarts when
 * its server certificate is re-issued) is retried, up to a minute.
 * @throws Error with machinectl's output when it still fails.
 */
export async function readMemory(config: string, port: number): Promise<MemoryDoc> {
  let r = await machinectl(config, port, "memory", "-o", "json");
  for (let i = 0; i < 12 && r.code !== 0 && /did not answer/.test(r.err); i++) {
    await new Promise((res) => setTimeout(res, 5000));
    r = await machinectl(config, port, "memory", "-o", "json");
  }
  if (r.code !== 0) throw new Error(`machinectl memory failed (${r.code}): ${r.err}`);
  return JSON.parse(r.out);
}

const mib = (bytes: number | string) => +(Number(bytes) / 1024 / 1024).toFixed(1);

/** MemTotal and MemAvailable in MiB, for a JSON line. */
export function memoryMiB(m: MemoryDoc): { memTotalMiB: number; memAvailableMiB: number } {
  return { memTotalMiB: mib(m.meminfo.totalBytes), memAvailableMiB: mib(m.meminfo.availableBytes) };
}

/**
 * The cgroups whose memory.events count an OOM kill (global or their own
 * limit's), as `path: n` lines; empty when nothing was killed.
 */
export async function oomKills(config: string, port: number): Promise<string[]> {
  const r = await machinectl(config, port, "cgroups", "-o", "json");
  if (r.code !== 0) throw new Error(`machinectl cgroups failed (${r.code}): ${r.err}`);
  const all = JSON.parse(r.out).cgroups as Array<
    { path: string; memoryEvents?: Record<string, number | string> }
  >;
  return all
    .filter((c) => Number(c.memoryEvents?.oom_kill ?? 0) > 0)
    .map((c) => `/${c.path}: ${c.memoryEvents?.oom_kill}`);
}
