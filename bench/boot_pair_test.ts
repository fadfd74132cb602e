import assert from "node:assert/strict";
import { type BootFigures, summarizePairs } from "./boot_pair.ts";
import { bootPhases } from "../imager/mod.ts";

/** A boot's figures from its console lines, as bootOnce reads them. */
function boot(image: string, qemuS: number, lines: string[]): BootFigures {
  return {
    image,
    qemuStartToApiReadyS: qemuS,
    machinedStartToApiReadyMs: 0,
    ...bootPhases(lines.join("\n")),
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
