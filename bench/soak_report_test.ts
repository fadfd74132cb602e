import assert from "node:assert/strict";
import fc from "fast-check";
import {
  leastSquaresSlope,
  parseDuration,
  parseSoakArgs,
  type RssSample,
  soakReport,
  summarizeRss,
} from "./soak_report.ts";

const MIN = 60_000;

Deno.test("leastSquaresSlope: a line's slope exactly, NaN when undefined", () => {
  assert.equal(leastSquaresSlope([[0, 1], [1, 3], [2, 5]]), 2);
  assert.equal(leastSquaresSlope([[0, 4], [10, 4]]), 0);
  assert.ok(Number.isNaN(leastSquaresSlope([])));
  assert.ok(Number.isNaN(leastSquaresSlope([[1, 1]])));
  assert.ok(Number.isNaN(leastSquaresSlope([[1, 1], [1, 2]])));
});

Deno.test("leastSquaresSlope: recovers the slope of any line, and noise symmetric about it", () => {
  fc.assert(fc.property(
    fc.double({ min: -1000, max: 1000, noNaN: true }),
    fc.double({ min: -1e6, max: 1e6, noNaN: true }),
    fc.integer({ min: 2, max: 50 }),
    (a, b, n) => {
      const line = Array.from({ length: n }, (_, i) => [i * 5, a * i * 5 + b] as const);
      assert.ok(Math.abs(leastSquaresSlope(line) - a) <= 1e-6 * (1 + Math.abs(a) + Math.abs(b)));
      // ±d alternating on an even count around the line leaves the slope unchanged at most
      // by the noise's own trend, which is bounded by 2d / span.
      const d = 3;
      const noisy = line.map(([x, y], i) => [x, y + (i % 2 ? d : -d)] as const);
      const span = (n - 1) * 5;
      assert.ok(Math.abs(leastSquaresSlope(noisy) - a) <= 12 * d / span + 1e-6 * (1 + Math.abs(b)));
    },
  ));
});

/** RSS rising `perMin` KiB a minute from `start` KiB, sampled every 5 s for `minutes`. */
function ramp(start: number, perMin: number, minutes: number, proc = "edge"): RssSample[] {
  return Array.from({ length: minutes * 12 + 1 }, (_, i) => ({
    tMs: i * 5000,
    rssKiB: { [proc]: start + perMin * (i * 5000) / MIN },
  }));
}

Deno.test("summarizeRss: MiB per hour after the warm-up, first/peak/last in MiB", () => {
  // 1 MiB a minute is 60 MiB/h.
  const s = summarizeRss(ramp(100 * 1024, 1024, 10), "edge", MIN);
  assert.equal(s.slopeMiBPerHour, 60);
  assert.equal(s.firstMiB, 100);
  assert.equal(s.lastMiB, 110);
  assert.equal(s.peakMiB, 110);
  assert.equal(s.fitted, 9 * 12 + 1);
});

Deno.test("summarizeRss: the warm-up's climb is left out of the slope", () => {
  // Climbs 50 MiB in the first minute, then flat: the slope is the plateau's, 0.
  const samples = ramp(100 * 1024, 0, 10).map((x) => ({
    tMs: x.tMs,
    rssKiB: { edge: x.tMs < MIN ? 100 * 1024 + 50 * 1024 * x.tMs / MIN : 150 * 1024 },
  }));
  const s = summarizeRss(samples, "edge", MIN);
  assert.equal(s.slopeMiBPerHour, 0);
  assert.equal(s.peakMiB, 150);
  assert.ok(summarizeRss(samples, "edge", 0).slopeMiBPerHour > 0);
});

Deno.test("summarizeRss: a missing or NaN reading is a gap, not a zero", () => {
  const samples: RssSample[] = [
    ...ramp(200 * 1024, 0, 3),
    { tMs: 3.5 * MIN, rssKiB: { edge: NaN } },
    { tMs: 4 * MIN, rssKiB: {} },
  ];
  const s = summarizeRss(samples, "edge", MIN);
  assert.equal(s.slopeMiBPerHour, 0);
  assert.equal(s.lastMiB, 200);
  assert.equal(s.fitted, 2 * 12 + 1);
  assert.ok(Number.isNaN(summarizeRss(samples, "machined", 0).peakMiB));
});

Deno.test("soakReport: summaries per process, delivery percentiles, samples in MiB", () => {
  const samples = ramp(100 * 1024, 1024, 2, "machined").map((m, i) => ({
    tMs: m.tMs,
    rssKiB: { ...m.rssKiB, edge: 8 * 1024 + (i % 2) * 1024 },
  }));
  const r = soakReport({
    edge: "rust",
    durationMs: 2 * MIN,
    warmupMs: MIN,
    applyEveryMs: 2000,
    samples,
    load: [1.5, 2.25],
    delivery: {
      streams: 10,
      applies: 60,
      applyErrors: 0,
      delivered: 600,
      expected: 600,
      overflows: 0,
      streamsEnded: 0,
      latenciesMs: Array.from({ length: 100 }, (_, i) => 100 - i),
    },
  });
  assert.deepEqual(Object.keys(r.rss), ["machined", "edge"]);
  assert.equal(r.rss.machined.slopeMiBPerHour, 60);
  assert.equal(r.rss.edge.peakMiB, 9);
  assert.equal(r.delivery.eventsPerSecond, 5);
  assert.equal(r.delivery.p50Ms, 51);
  assert.equal(r.delivery.p99Ms, 100);
  assert.deepEqual(r.loadAverage, { start: 1.5, end: 2.25 });
  assert.deepEqual(r.samples[1], { tS: 5, machined: 100.1, edge: 9 });
  assert.equal(r.samples.length, samples.length);
});

Deno.test("parseDuration: units, plain minutes, and a clear error", () => {
  assert.equal(parseDuration("90s"), 90_000);
  assert.equal(parseDuration("10m"), 600_000);
  assert.equal(parseDuration("10"), 600_000);
  assert.equal(parseDuration("1.5h"), 5_400_000);
  assert.equal(parseDuration("250ms"), 250);
  assert.throws(() => parseDuration("ten"), /invalid soak duration "ten"/);
});

Deno.test("parseSoakArgs: its flags out, suite names left in order", () => {
  const a = parseSoakArgs(["api", "--soak", "--duration=5m", "--edge=rust", "watch"]);
  assert.equal(a.soak, true);
  assert.equal(a.durationMs, 5 * MIN);
  assert.deepEqual(a.edges, ["rust"]);
  assert.deepEqual(a.rest, ["api", "watch"]);
  const d = parseSoakArgs([]);
  assert.deepEqual(
    [d.soak, d.durationMs, d.edges, d.streams],
    [false, 10 * MIN, ["rust"], 1000],
  );
  assert.deepEqual(parseSoakArgs(["--streams=200"]).streams, 200);
  assert.deepEqual([d.watchFanout, d.unread], ["edge", 0]);
  const f = parseSoakArgs(["--watch-fanout=machined", "--unread=5000"]);
  assert.deepEqual([f.watchFanout, f.unread], ["machined", 5000]);
  assert.throws(() => parseSoakArgs(["--watch-fanout=both"]), /unknown or invalid flag/);
  assert.throws(() => parseSoakArgs(["--edge=apid"]), /unknown or invalid flag "--edge=apid"/);
  assert.throws(() => parseSoakArgs(["--edge=nginx"]), /unknown or invalid flag "--edge=nginx"/);
  assert.throws(() => parseSoakArgs(["--sok"]), /unknown or invalid flag/);
});
