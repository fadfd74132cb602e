/**
 * The node's footprint as the boot benchmark reports it, printed on the
 * console for the host to read (e2e/node_boot_test.ts): MemAvailable, the
 * proportional set size of machined and apid (/proc/PID/smaps_rollup), their
 * resident set split into anonymous, file-backed and shared memory
 * (/proc/PID/status: a heap's growth shows in RssAnon, the code mapped from
 * the read-only root in RssFile), and a
 * real write attempt on the read-only root (/usr and /machined), whose error
 * shows the root image is immutable. Printed once containerd is ready, so the
 * figure includes it.
 */
import type { EventBus } from "../../events/mod.ts";

/** Paths the write probe tries to create (and removes if that ever succeeds). */
export const WRITE_PROBES = ["/usr/.machined-write-probe", "/machined/.machined-write-probe"];

/** A kB field of a /proc file (`MemAvailable:`, `Pss:`), or undefined. */
export async function procKiB(path: string, field: string): Promise<number | undefined> {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, "m").exec(await Deno.readTextFile(path));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Tries to write `path`: "ok" if it could (then removes it), else the error code (EROFS). */
export async function tryWrite(path: string): Promise<string> {
  try {
    await Deno.writeTextFile(path, "probe\n");
    await Deno.remove(path).catch(() => {});
    return "ok";
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code ?? (e instanceof Error ? e.name : String(e));
  }
}

/** /proc/PID/status's split of the resident set: anonymous (heap), file-backed (code), shmem. */
export const RSS_PARTS = ["RssAnon", "RssFile", "RssShmem"] as const;

/**
 * The console line: `machined: footprint at=… mem_available_kib=… machined_pss_kib=…
 * apid_pss_kib=… write_usr=… write_machined=…`, then each process's {@link RSS_PARTS}
 * (`machined_rss_anon_kib=…`), appended so what parsed the older line still does.
 */
export async function footprintLine(apidPid: number | undefined, label: string): Promise<string> {
  const [usr, machined] = await Promise.all(WRITE_PROBES.map(tryWrite));
  const pss = (pid: number | "self" | undefined) =>
    pid === undefined ? undefined : procKiB(`/proc/${pid}/smaps_rollup`, "Pss");
  return `machined: footprint at=${label} mem_available_kib=${await procKiB(
    "/proc/meminfo",
    "MemAvailable",
  )} machined_pss_kib=${await pss("self")} apid_pss_kib=${await pss(apidPid)} ` +
    `write_usr=${usr} write_machined=${machined}` +
    `${await rssParts("machined", "self")}${await rssParts("apid", apidPid)}`;
}

/**
 * ` <who>_rss_anon_kib=… <who>_rss_file_kib=… <who>_rss_shmem_kib=…` from
 * /proc/PID/status; `undefined` for a value that cannot be read (no such process).
 */
export async function rssParts(who: string, pid: number | "self" | undefined): Promise<string> {
  let out = "";
  for (const part of RSS_PARTS) {
    const kib = pid === undefined ? undefined : await procKiB(`/proc/${pid}/status`, part);
    out += ` ${who}_${rssFieldName(part)}_kib=${kib}`;
  }
  return out;
}

/** `RssAnon` → `rss_anon`. */
function rssFieldName(part: string): string {
  return part.replace(/^Rss/, "rss_").toLowerCase();
}

/**
 * Prints the footprint line once the service `service` (containerd) first
 * reports ready, after `settleMs` so its start-up allocations are counted.
 */
export function reportFootprintWhenReady(
  events: EventBus,
  apidPid: () => number | undefined,
  opts: { service?: string; settleMs?: number } = {},
): void {
  const service = opts.service ?? "containerd";
  (async () => {
    const sub = events.subscribe({ tail: 1000 });
    for await (const e of sub) {
      if (e.kind !== "service" || e.subject !== service || e.action !== "ready") continue;
      sub.close();
      await new Promise((r) => setTimeout(r, opts.settleMs ?? 5_000));
      console.log(await footprintLine(apidPid(), `${service}-ready`));
      return;
    }
  })().catch((e) => console.log(`machined: footprint failed: ${e}`));
}
