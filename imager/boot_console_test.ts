import assert from "node:assert/strict";
import { bootMemory, bootPhases, FOOTPRINT, PAGE_OUT, ROOT_MOUNTED } from "./boot_console.ts";

const ROOT_LINE = "machined-init: root /esp/A/root.img (squashfs, /dev/vda at byte 18173952) " +
  "verified sha256 d05a0bcabd0b in 1.66s, mounted read-only in 1.99s";
const FOOT_LINE = "machined: footprint at=containerd-ready mem_available_kib=707948 " +
  "machined_pss_kib=93938 apid_pss_kib=3537 write_usr=EROFS write_machined=EROFS";
const READY_LINE = "machined: API ready pid=1 port=50000 machined_ms=7708 uptime_s=15.46 " +
  "probe=ok probe_ms=4107 probe_attempts=6 probe_addr=10.0.2.15 listen_ms=3589";

/** A boot as a newer image prints it, with a reboot's lines after it. */
const NEW = [
  "[    2.034392] Run /sbin/machined-init as init process",
  "machined-init: start uptime_s=2.04",
  `${ROOT_LINE} uptime_s=4.10`,
  "machined: start uptime_s=5.83",
  "machined: main uptime_s=6.91",
  "2026-12-04T20:00:00.000Z [info] watchdog: petting /dev/watchdog",
  READY_LINE,
  "machined: api first served machined_ms=8078 uptime_s=15.84 role=os:admin",
  "machined: rss machined_kib=112568 apid_kib=2184",
  `${FOOT_LINE} machined_rss_anon_kib=40960 machined_rss_file_kib=61440 ` +
  "machined_rss_shmem_kib=0 apid_rss_anon_kib=1024 apid_rss_file_kib=2048 apid_rss_shmem_kib=4",
  "machined-init: start uptime_s=1.50",
  "machined: start uptime_s=3.00",
].join("\n");

Deno.test("boot_console: the root line matches with the whole-file hash and with dm-verity", () => {
  const verity = ROOT_LINE.replace(
    "sha256 d05a0bcabd0b in 1.66s",
    "dm-verity 9f2c04a1b7e3 in 0.01s",
  );
  const m = ROOT_MOUNTED.exec(`${verity} uptime_s=3.10`);
  assert.equal(m?.[1], "squashfs");
  assert.equal(m?.[3], "0.01");
  assert.equal(m?.[5], "3.10");
  assert.equal(ROOT_MOUNTED.exec(ROOT_LINE)?.[3], "1.66");
});

Deno.test("boot_console: every phase from the guest's uptime, the first boot's", () => {
  assert.deepEqual(bootPhases(NEW), {
    kernelStartToInitS: 2.04,
    initStartToRootMountedS: 2.06,
    rootHashS: 1.66,
    rootMountS: 1.99,
    rootMountedToMachinedFirstLineS: 1.73,
    machinedFirstLineToMainS: 1.08,
    machinedStartToApiReadyS: 8.55,
    apiReadyToFirstServedS: 0.38,
    kernelStartToApiReadyS: 15.46,
  });
  // From kernel start, the phases add up to API ready.
  const p = bootPhases(NEW);
  const sum = p.kernelStartToInitS! + p.initStartToRootMountedS! +
    p.rootMountedToMachinedFirstLineS! + p.machinedFirstLineToMainS! + p.machinedStartToApiReadyS!;
  assert.equal(+sum.toFixed(2), p.kernelStartToApiReadyS);
});

Deno.test("boot_console: an older image's lines still parse; what they lack is null", () => {
  const old = [ROOT_LINE, READY_LINE, FOOT_LINE].join("\n");
  assert.deepEqual(bootPhases(old), {
    kernelStartToInitS: null,
    initStartToRootMountedS: null,
    rootHashS: 1.66,
    rootMountS: 1.99,
    rootMountedToMachinedFirstLineS: null,
    machinedFirstLineToMainS: null,
    machinedStartToApiReadyS: null,
    apiReadyToFirstServedS: null,
    kernelStartToApiReadyS: 15.46,
  });
  assert.equal(ROOT_MOUNTED.exec(old)?.[5], undefined);
  const foot = FOOTPRINT.exec(old)!;
  assert.deepEqual(foot.slice(1, 6), ["707948", "93938", "3537", "EROFS", "EROFS"]);
  const nulls = new Array(11).fill(null);
  assert.deepEqual(Object.values(bootMemory(foot)), nulls);
  assert.deepEqual(Object.values(bootMemory(undefined, PAGE_OUT.exec(old))), nulls);
});

Deno.test("boot_console: machined's and the edge's resident set, split, in MiB", () => {
  const foot = FOOTPRINT.exec(NEW)!;
  assert.deepEqual(foot.slice(4, 6), ["EROFS", "EROFS"]);
  const pageOut = PAGE_OUT.exec(
    "machined: page-out pass=1 ranges=51 refused=0 mapped_mib=107.4 pss_kib=92616->74208 " +
      "rss_file_kib=56476->38504",
  );
  assert.deepEqual(bootMemory(foot, pageOut), {
    machinedPssBeforePageOutMiB: 90.4,
    machinedPssAfterPageOutMiB: 72.5,
    machinedRssFileBeforePageOutMiB: 55.2,
    machinedRssFileAfterPageOutMiB: 37.6,
    memAvailableAtPageOutMiB: null,
    machinedRssAnonMiB: 40,
    machinedRssFileMiB: 60,
    machinedRssShmemMiB: 0,
    apidRssAnonMiB: 1,
    apidRssFileMiB: 2,
    apidRssShmemMiB: 0,
  });
});

Deno.test("boot_console: the page-out line's MemAvailable, for a node without containerd", () => {
  const pageOut = PAGE_OUT.exec(
    "machined: page-out pass=1 ranges=51 refused=0 mapped_mib=107.4 pss_kib=92616->74208 " +
      "rss_file_kib=56476->38504 mem_available_kib=801792",
  );
  const m = bootMemory(null, pageOut);
  assert.equal(m.memAvailableAtPageOutMiB, 783);
  assert.equal(m.machinedPssAfterPageOutMiB, 72.5);
  assert.equal(m.machinedRssAnonMiB, null, "no footprint line: no split");
});
