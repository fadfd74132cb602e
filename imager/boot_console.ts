/**
 * The node's boot console as the host reads it: the lines machined-init and
 * machined print on the way to the API, and the boot's phases on the guest's
 * own clock (CLOCK_BOOTTIME, /proc/uptime: `uptime_s=`), so the QEMU boot
 * tests (e2e/boot_figures.ts) and the alternating boot bench
 * (bench/boot_pair.ts) read them with one set of patterns. A line of an older
 * image that lacks a newer field leaves that figure null rather than failing.
 *
 * @module
 */

/** machined-init's first line (native-ops/init/src/uptime.rs): the kernel handed over. */
export const INIT_START = /machined-init: start uptime_s=([\d.]+)/;
/**
 * machined-init's line once the verified root image is mounted (root.rs): fs,
 * loop source, verification (`sha256 <hex12>`: the whole-file hash, or
 * `dm-verity <root12>`: the dm-verity device's setup) and whole-mount
 * seconds, then the uptime (newer images).
 */
export const ROOT_MOUNTED =
  /machined-init: root \S+ \((\w+), ([^)]*)\) verified (?:sha256|dm-verity) \w+ in ([\d.]+)s, mounted read-only in ([\d.]+)s(?: uptime_s=([\d.]+))?/;
/** machined's first JS (start_line.ts): Deno is running and reading the bundle. */
export const MACHINED_START = /machined: start uptime_s=([\d.]+)/;
/** machined's main() after every module was evaluated (main.ts). */
export const MACHINED_MAIN = /machined: main uptime_s=([\d.]+)/;
/**
 * machined's line once a call through the edge was answered (its own probe,
 * api/host/api_ready_report.ts): the probe's outcome, time, attempts and address,
 * and when the edge listened.
 */
export const API_READY =
  /machined: API ready pid=(\d+) port=\d+ machined_ms=(\d+) uptime_s=([\d.]+)(?: probe=(\w+) probe_ms=(\d+) probe_attempts=(\d+) probe_addr=(\S+) listen_ms=(\d+))?/;
/** machined's line once the first client call (not the probe's) was answered. */
export const FIRST_SERVED = /machined: api first served machined_ms=(\d+) uptime_s=([\d.]+)/;
/** The RSS of machined and of the apid running 5 s after ready. */
export const RSS = /machined: rss machined_kib=(\d+) apid_kib=(\d+)/;
/**
 * api/host/footprint.ts, printed once containerd is ready: MemAvailable, PSS,
 * the write probes, then (newer images) each process's RssAnon/RssFile/RssShmem.
 */
export const FOOTPRINT =
  /machined: footprint at=containerd-ready mem_available_kib=(\d+) machined_pss_kib=(\d+) apid_pss_kib=(\d+) write_usr=(\S+) write_machined=(\S+)(?: machined_rss_anon_kib=(\d+) machined_rss_file_kib=(\d+) machined_rss_shmem_kib=(\d+) apid_rss_anon_kib=(\d+) apid_rss_file_kib=(\d+) apid_rss_shmem_kib=(\d+))?/;
/**
 * boot/page_out.ts's first pass, 30 s after the node reached its stage: PSS and
 * RssFile around it, and (newer images) MemAvailable after it, which a node
 * without containerd (no footprint line) reports only here.
 */
export const PAGE_OUT =
  /machined: page-out pass=1 ranges=(\d+) refused=(\d+) mapped_mib=([\d.]+) pss_kib=(\d+)->(\d+) rss_file_kib=(\d+)->(\d+)(?: mem_available_kib=(\d+))?/;
/** A console line that fails any boot at once. */
export const FAIL = /Kernel panic|machined: FATAL|machined-init: FATAL/;

/**
 * The boot's phases in seconds of guest uptime, each null when a line it needs
 * is missing. Consecutive phases share their ends, so from kernel start they
 * add up to `kernelStartToApiReadyS`.
 */
export interface BootPhases {
  /** Kernel start → machined-init's first line (the kernel and its initramfs). */
  kernelStartToInitS: number | null;
  /** machined-init start → root mounted (modules, ESP, loop, hash, mount, seed). */
  initStartToRootMountedS: number | null;
  /** Of which the root image's SHA-256 (machined-init's own timer). */
  rootHashS: number | null;
  /** Of which modules loaded up to the writable places seeded (machined-init's own timer). */
  rootMountS: number | null;
  /** Root mounted → machined's first JS: switch_root, Deno's exec and start, V8, reading main.js. */
  rootMountedToMachinedFirstLineS: number | null;
  /** machined's first JS → main(): evaluating the bundle's modules. */
  machinedFirstLineToMainS: number | null;
  /** main() → `API ready`: boot sequence, PKI, the edge, the probe's answer. */
  machinedStartToApiReadyS: number | null;
  /** `API ready` → the first client call answered (null when no client called). */
  apiReadyToFirstServedS: number | null;
  /** Kernel start → `API ready`. */
  kernelStartToApiReadyS: number | null;
}

/** The {@link BootPhases} of the first boot in `console` (a reboot's lines come later). */
export function bootPhases(console: string): BootPhases {
  const at = (re: RegExp, group: number) => num(re.exec(console)?.[group]);
  const init = at(INIT_START, 1);
  const root = ROOT_MOUNTED.exec(console);
  const rootAt = num(root?.[5]);
  const start = at(MACHINED_START, 1);
  const main = at(MACHINED_MAIN, 1);
  const ready = at(API_READY, 3);
  const served = at(FIRST_SERVED, 2);
  return {
    kernelStartToInitS: init,
    initStartToRootMountedS: between(init, rootAt),
    rootHashS: num(root?.[3]),
    rootMountS: num(root?.[4]),
    rootMountedToMachinedFirstLineS: between(rootAt, start),
    machinedFirstLineToMainS: between(start, main),
    machinedStartToApiReadyS: between(main, ready),
    apiReadyToFirstServedS: between(ready, served),
    kernelStartToApiReadyS: ready,
  };
}

/**
 * machined's and the edge's resident set, split, from the footprint line, and
 * machined's around its first page-out (MiB, null if absent).
 */
export interface BootMemory {
  /** machined's PSS just before its first page-out (boot settled, containerd running). */
  machinedPssBeforePageOutMiB: number | null;
  /** ... and just after: its working set plus what it faults back in. */
  machinedPssAfterPageOutMiB: number | null;
  machinedRssFileBeforePageOutMiB: number | null;
  machinedRssFileAfterPageOutMiB: number | null;
  /** MemAvailable just after the first page-out (any node, containerd or not). */
  memAvailableAtPageOutMiB: number | null;
  machinedRssAnonMiB: number | null;
  machinedRssFileMiB: number | null;
  machinedRssShmemMiB: number | null;
  apidRssAnonMiB: number | null;
  apidRssFileMiB: number | null;
  apidRssShmemMiB: number | null;
}

/** The {@link BootMemory} of a {@link FOOTPRINT} match and a {@link PAGE_OUT} match. */
export function bootMemory(
  foot: RegExpExecArray | null | undefined,
  pageOut?: RegExpExecArray | null,
): BootMemory {
  const kib = (v: string | undefined) => v === undefined ? null : +(Number(v) / 1024).toFixed(1);
  const mib = (i: number) => kib(foot?.[i]);
  return {
    machinedPssBeforePageOutMiB: kib(pageOut?.[4]),
    machinedPssAfterPageOutMiB: kib(pageOut?.[5]),
    machinedRssFileBeforePageOutMiB: kib(pageOut?.[6]),
    machinedRssFileAfterPageOutMiB: kib(pageOut?.[7]),
    memAvailableAtPageOutMiB: kib(pageOut?.[8]),
    machinedRssAnonMiB: mib(6),
    machinedRssFileMiB: mib(7),
    machinedRssShmemMiB: mib(8),
    apidRssAnonMiB: mib(9),
    apidRssFileMiB: mib(10),
    apidRssShmemMiB: mib(11),
  };
}

function num(v: string | undefined): number | null {
  return v === undefined ? null : Number(v);
}

function between(from: number | null, to: number | null): number | null {
  return from === null || to === null ? null : +(to - from).toFixed(2);
}
