/**
 * The boot test's JSON line, shared by the x86_64 and arm64 boot tests so
 * both report the same figures from the same console lines: what the node
 * prints (API ready, RSS, footprint, the root mount), the boot's phases on
 * the guest's clock (imager/boot_console.ts) and the image's sizes.
 *
 * @module
 */
import { bootMemory, bootPhases, FIRST_SERVED, type ImageResult, PAGE_OUT } from "../imager/mod.ts";

// The console's lines, one set for every reader (imager/boot_console.ts).
export {
  API_READY,
  FAIL,
  FIRST_SERVED,
  FOOTPRINT,
  INIT_START,
  MACHINED_MAIN,
  MACHINED_START,
  PAGE_OUT,
  ROOT_MOUNTED,
  RSS,
} from "../imager/mod.ts";

/** api/host/apid_report.ts: what the kernel says apid (machined-edge) may do, 5 s after ready. */
export const APID_PRIVILEGES =
  /machined: apid pid=\d+ exe=(\S+) uid=(\d+) cap_eff=([0-9a-f]+) no_new_privs=(\d) cgroup=(\S+) memory_max=(\S+)/;

/** Checks the {@link APID_PRIVILEGES} match: the edge, unprivileged, in its own limited cgroup. */
export function assertApidUnprivileged(m: RegExpMatchArray): void {
  const [, exe, uid, capEff, noNewPrivs, cgroup, memoryMax] = m;
  const fail = (what: string) => {
    throw new Error(`apid ${what}: ${m[0]}`);
  };
  if (exe !== "/machined/bin/machined-edge") fail("is not machined-edge");
  if (uid !== "50000") fail("does not run as machined-api (50000)");
  if (!/^0+$/.test(capEff)) fail("holds capabilities");
  if (noNewPrivs !== "1") fail("may gain privileges");
  if (cgroup !== "/system/apid") fail("is not in its own cgroup");
  if (!/^\d+$/.test(memoryMax)) fail("has no memory limit");
}

/** What the figures are read from: the console matches and host-side times. */
export interface BootObservations {
  accel: string;
  image: ImageResult;
  /** QEMU start → first answer over mutual TLS, host-measured. */
  apiMs: number;
  /** QEMU start → STATE and EPHEMERAL ready, host-measured. */
  volumesReadyS: number;
  ready: RegExpExecArray;
  /** The first-served line, when the test waited for it (else read from `console`, if printed). */
  firstServed?: RegExpExecArray;
  rss: RegExpExecArray;
  root: RegExpExecArray;
  foot: RegExpExecArray;
  /** The console so far (vm.console()), for the phases; an older image's missing lines give nulls. */
  console: string;
}

const mib = (kib: string) => +(Number(kib) / 1024).toFixed(1);

/** The JSON line's figures. */
export async function bootFigures(o: BootObservations): Promise<Record<string, unknown>> {
  const phases = bootPhases(o.console);
  return {
    at: new Date().toISOString(),
    accel: o.accel,
    imageBuildS: +o.image.seconds.toFixed(1),
    qemuStartToApiAnswerS: +(o.apiMs / 1000).toFixed(1),
    kernelStartToApiReadyS: Number(o.ready[3]),
    machinedStartToApiReadyMs: Number(o.ready[2]),
    ...probeFigures(o.ready, o.firstServed ?? FIRST_SERVED.exec(o.console) ?? undefined),
    qemuStartToVolumesReadyS: o.volumesReadyS,
    machinedRssMiB: mib(o.rss[1]),
    apidRssMiB: mib(o.rss[2]),
    memAvailableWithContainerdMiB: mib(o.foot[1]),
    machinedPssMiB: mib(o.foot[2]),
    apidPssMiB: mib(o.foot[3]),
    rootFs: o.root[1],
    rootLoop: o.root[2],
    rootHashS: Number(o.root[3]),
    rootMountS: Number(o.root[4]),
    kernelStartToInitS: phases.kernelStartToInitS,
    initStartToRootMountedS: phases.initStartToRootMountedS,
    rootMountedToMachinedFirstLineS: phases.rootMountedToMachinedFirstLineS,
    machinedFirstLineToMainS: phases.machinedFirstLineToMainS,
    machinedStartToApiReadyS: phases.machinedStartToApiReadyS,
    ...bootMemory(o.foot, PAGE_OUT.exec(o.console)),
    imageBytes: Number(o.image.imageBytes),
    initramfsBytes: (await Deno.stat(o.image.initramfsPath)).size,
    rootImageBytes: (await Deno.stat(o.image.rootImagePath)).size,
  };
}

/** The ready line's probe fields and the first-served line, when printed. */
function probeFigures(ready: RegExpExecArray, first?: RegExpExecArray): Record<string, unknown> {
  const num = (v: string | undefined) => (v === undefined ? null : Number(v));
  return {
    apiProbe: ready[4] ?? null,
    apiProbeMs: num(ready[5]),
    apiProbeAttempts: num(ready[6]),
    apiProbeAddress: ready[7] ?? null,
    machinedStartToEdgeListenMs: num(ready[8]),
    kernelStartToFirstServedS: num(first?.[2]),
    apiReadyToFirstServedS: first ? +(Number(first[2]) - Number(ready[3])).toFixed(2) : null,
  };
}

/** Prints the JSON line `{suite, ...figures}` and writes the figures to `file` (bench/results). */
export async function reportBootFigures(
  suite: string,
  file: string,
  figures: Record<string, unknown>,
): Promise<void> {
  console.log(JSON.stringify({ suite, ...figures }));
  await Deno.mkdir("bench/results", { recursive: true });
  await Deno.writeTextFile(file, JSON.stringify(figures, null, 2) + "\n");
}
