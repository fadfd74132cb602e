import assert from "node:assert/strict";
import { type BootFigures, memoryFigures, summarizePairs } from "./boot_pair.ts";
import { bootPhases, FOOTPRINT, PAGE_OUT } from "../imager/mod.ts";

/** A boot's figures from its console lines, as bootOnce reads them. */
function boot(image: string, qemuS: number, lines: string[]): BootFigures {
  return {
    image,
    qemuStartToApiReadyS: qemuS,
    machinedStartToApiReadyMs: 0,
    qemuStartToFirstAnswerS: qemuS + 1,
    ...bootPhases(lines.join("\n")),
    ...memoryFigures(
      FOOTPRINT.exec(lines.join("\n")),
      PAGE_OUT.exec(lines.join("\n")),
    ),
  };
}

const ready = (uptime: number) =>
  `machined: API ready pid=1 port=50000 machined_ms=0 uptime_s=${uptime} probe=ok`;

Deno.test("boot_pair: each phase's medians for A and B, the B/A ratio per pair and its median", () => {
  const a = (init: number, start: number, up: number) =>
    boot("a.img", up + 10, [
      `machined-init: start uptime_s=${init}`,
      `machined: start uptime_s=${start}`,
      `machined: main uptime_s=${start + 1}`,
      ready(up),
    ]);
  // B is an older image: no phase lines, only API ready.
  const b = (up: number) => boot("b.img", up + 10, [ready(up)]);
  const s = summarizePairs([
    { a: a(2, 5, 20), b: b(30) },
    { a: a(3, 6, 10), b: b(30) },
    { a: a(4, 8, 40), b: b(20) },
  ]);
  assert.equal(s.pairs, 3);
  assert.equal(s.medianA.kernelStartToInitS, 3);
  assert.equal(s.medianA.machinedFirstLineToMainS, 1);
  assert.equal(s.medianA.kernelStartToApiReadyS, 20);
  assert.equal(s.medianB.kernelStartToApiReadyS, 30);
  assert.equal(s.medianB.kernelStartToInitS, null);
  assert.deepEqual(s.ratiosBOverA.kernelStartToApiReadyS, [1.5, 3, 0.5]);
  assert.equal(s.medianRatioBOverA.kernelStartToApiReadyS, 1.5);
  assert.deepEqual(s.ratiosBOverA.qemuStartToApiReadyS, [1.33, 2, 0.6]);
  assert.deepEqual(s.ratiosBOverA.kernelStartToInitS, [null, null, null]);
  assert.equal(s.medianRatioBOverA.machinedFirstLineToMainS, null);
  assert.ok(!("image" in s.medianA));
});

const footprint = (availKib: number, pssKib: number) =>
  `machined: footprint at=containerd-ready mem_available_kib=${availKib} machined_pss_kib=${pssKib} ` +
  `apid_pss_kib=4096 write_usr=refused write_machined=refused machined_rss_anon_kib=40960 ` +
  `machined_rss_file_kib=51200 machined_rss_shmem_kib=0 apid_rss_anon_kib=1024 ` +
  `apid_rss_file_kib=2048 apid_rss_shmem_kib=0`;
const pageOut = (afterKib: number) =>
  `machined: page-out pass=1 ranges=51 refused=0 mapped_mib=107.4 pss_kib=94208->${afterKib} ` +
  `rss_file_kib=57344->${afterKib - 40960}`;

Deno.test("boot_pair: memory figures from the footprint and page-out lines, with their ratios", () => {
  const a = boot("a.img", 30, [ready(20), footprint(716_800, 94_208), pageOut(94_208)]);
  const b = boot("b.img", 30, [ready(20), footprint(737_280, 92_160), pageOut(75_776)]);
  assert.equal(a.memAvailableMiB, 700);
  assert.equal(a.machinedPssMiB, 92);
  assert.equal(a.machinedRssAnonMiB, 40);
  assert.equal(b.machinedPssAfterPageOutMiB, 74);
  assert.equal(b.machinedRssFileAfterPageOutMiB, 34);
  const s = summarizePairs([{ a, b }]);
  assert.deepEqual(s.ratiosBOverA.machinedPssAfterPageOutMiB, [0.8]);
  assert.equal(s.medianRatioBOverA.memAvailableMiB, 1.03);
  assert.equal(s.medianB.qemuStartToFirstAnswerS, 31);
  // Without --memory, every memory figure is null, not absent: the summary still names it.
  const bare = boot("c.img", 30, [ready(20)]);
  assert.equal(bare.machinedPssMiB, null);
  assert.ok("machinedPssMiB" in summarizePairs([{ a: bare, b: bare }]).medianA);
});
