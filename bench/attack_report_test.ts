import assert from "node:assert/strict";
import {
  atLeast,
  atMost,
  AttackArgsError,
  floodTargets,
  handshakeTargets,
  memMiB,
  parseAttackArgs,
  peakOf,
  soakTargets,
  summarizeProbes,
  verdict,
} from "./attack_report.ts";
import { metricValues } from "./attack_node.ts";

Deno.test("attack args: every scenario by default, 10 min soak, 4096 slow handshakes", () => {
  assert.deepEqual(parseAttackArgs([]), {
    scenarios: ["handshakes", "watch-flood", "soak"],
    soakMs: 600_000,
    holdMs: 25_000,
    slow: 4096,
    floodStreams: 15_000,
    floodChurnAfter: false,
    change: "sysctl",
    machinedEnv: {},
    sampleConnection: "fresh",
  });
});

Deno.test("attack args: machined's extra environment and V8 flags, for measuring", () => {
  const a = parseAttackArgs([
    "--machined-env=MALLOC_ARENA_MAX=2",
    "--machined-env=X=a=b",
    "--machined-v8-flags=--max-semi-space-size=1,--trace-gc",
  ]);
  assert.deepEqual(a.machinedEnv, { MALLOC_ARENA_MAX: "2", X: "a=b" });
  assert.deepEqual(a.machinedV8Flags, ["--max-semi-space-size=1", "--trace-gc"]);
  assert.deepEqual(parseAttackArgs(["--machined-v8-flags="]).machinedV8Flags, []);
  assert.throws(() => parseAttackArgs(["--machined-env=2X=1"]), AttackArgsError);
  assert.throws(() => parseAttackArgs(["--machined-env=NOVALUE"]), AttackArgsError);
});

Deno.test("attack args: scenarios repeated or comma-separated, once each, durations and counts", () => {
  const a = parseAttackArgs([
    "--scenario=soak,handshakes",
    "--scenario=soak",
    "--duration=5m",
    "--hold=90s",
    "--slow=512",
    "--flood-streams=2000",
  ]);
  assert.deepEqual(a.scenarios, ["soak", "handshakes"]);
  assert.deepEqual([a.soakMs, a.holdMs, a.slow, a.floodStreams], [300_000, 90_000, 512, 2000]);
  assert.equal(parseAttackArgs(["--change=hostname"]).change, "hostname");
  assert.equal(parseAttackArgs(["--flood-churn-after"]).floodChurnAfter, true);
  assert.equal(parseAttackArgs(["--sample-connection=kept"]).sampleConnection, "kept");
  assert.throws(() => parseAttackArgs(["--sample-connection=pooled"]), AttackArgsError);
});

Deno.test("attack args: unknown scenarios, flags and bad values are refused by name", () => {
  const bad: [string, RegExp][] = [
    ["--scenario=dos", /unknown scenario "dos"/],
    ["--scenario=", /unknown scenario ""/],
    ["--bogus=1", /unknown argument "--bogus=1"/],
    ["soak", /unknown argument "soak"/],
    ["--slow=0", /--slow needs a positive count/],
    ["--flood-streams=1e3", /--flood-streams needs a positive count/],
    ["--duration=soon", /--duration needs a duration/],
    ["--change=uptime", /unknown argument "--change=uptime"/],
  ];
  for (const [arg, msg] of bad) {
    assert.throws(
      () => parseAttackArgs([arg]),
      (e) => e instanceof AttackArgsError && msg.test(e.message),
    );
  }
});

Deno.test("targets: at most and at least, limits inclusive, NaN never met", () => {
  assert.deepEqual(atMost("x", 32, 32, "MiB").met, true);
  assert.deepEqual(atMost("x", 32.01, 32, "MiB").met, false);
  assert.deepEqual(atMost("x", NaN, 32, "MiB").met, false);
  assert.deepEqual(atMost("x", -Infinity, 32, "MiB").met, true);
  assert.deepEqual(atLeast("x", 1, 1, "streams").met, true);
  assert.deepEqual(atLeast("x", 0, 1, "streams").met, false);
  assert.deepEqual(atMost("x", 12.345, 32, "MiB").value, 12.3);
  assert.deepEqual(verdict([]).met, false, "nothing measured is not a pass");
  assert.deepEqual(verdict([atMost("a", 1, 2, "u"), atMost("b", 3, 2, "u")]).met, false);
  assert.deepEqual(verdict([atMost("a", 1, 2, "u"), atLeast("b", 3, 2, "u")]).met, true);
});

Deno.test("probes: failures make the worst call Infinity; slow ones are counted", () => {
  const ok = summarizeProbes(
    [{ ms: 10, ok: true }, { ms: 1500, ok: true }, { ms: 20, ok: true }],
    1000,
  );
  assert.deepEqual(ok, { calls: 3, failures: 0, slow: 1, p50Ms: 20, p99Ms: 1500, maxMs: 1500 });
  const failed = summarizeProbes([{ ms: 10, ok: true }, { ms: 5000, ok: false }], 1000);
  assert.deepEqual([failed.failures, failed.slow, failed.maxMs], [1, 0, 5000]);
  assert.deepEqual(handshakeTargets(20 * 1024, ok).map((t) => [t.value, t.met]), [[20, true], [
    1500,
    false,
  ]]);
  assert.deepEqual(handshakeTargets(33 * 1024, failed).map((t) => [t.value, t.met]), [
    [33, false],
    [Infinity, false],
  ]);
  assert.deepEqual(summarizeProbes([], 1000).maxMs, NaN);
});

Deno.test("flood targets: refused streams, growth over idle, and the return to idle", () => {
  const idle = 100 * 1024;
  const f = (peakMiB: number, afterMiB: number, refused: number) =>
    floodTargets({
      machinedIdleKiB: idle,
      machinedPeakKiB: peakMiB * 1024,
      machinedAfterKiB: afterMiB * 1024,
      refused,
    }).map((t) => [t.name, t.value, t.met]);
  assert.deepEqual(f(164, 110, 1), [
    ["streams.refused", 1, true],
    ["machined.rss.peak-idle", 64, true],
    ["machined.rss.after-vs-idle", 10, true],
  ]);
  assert.deepEqual(f(1309, 770, 0), [
    ["streams.refused", 0, false],
    ["machined.rss.peak-idle", 1209, false],
    ["machined.rss.after-vs-idle", 670, false],
  ]);
});

Deno.test("soak targets: growth over idle, slope, the edge's peak", () => {
  const t = soakTargets({
    machinedIdleMiB: 122,
    machinedPeakMiB: 446,
    machinedSlopeMiBPerHour: 0.5,
    edgePeakMiB: 15,
  });
  assert.deepEqual(t.map((x) => [x.name, x.value, x.met]), [
    ["machined.rss.peak-idle", 324, false],
    ["machined.rss.slope", 0.5, true],
    ["edge.rss.peak", 15, true],
  ]);
});

Deno.test("memory: KiB readings as MiB, the peak by RSS with gaps skipped", () => {
  const r = (rss: number) => ({ rssKiB: rss, pssKiB: rss / 2, rssAnonKiB: 1024, rssFileKiB: 512 });
  assert.deepEqual(memMiB(r(2048)), { rss: 2, pss: 1, rssAnon: 1, rssFile: 0.5 });
  assert.deepEqual(peakOf([r(1024), r(NaN), r(4096), r(2048)]).rssKiB, 4096);
  assert.deepEqual(peakOf([]).rssKiB, NaN);
});

Deno.test("metric values: samples by name and labels, other lines ignored", () => {
  const text = [
    "# HELP machined_edge_connections_total TLS connections accepted",
    "machined_edge_connections_total 12",
    'machined_edge_tls_refused_by_reason_total{reason="handshake_timeout"} 8192',
    "machined_process_heap_used_bytes 2.5e+07",
  ].join("\n");
  assert.deepEqual(metricValues(text, "machined_"), {
    machined_edge_connections_total: 12,
    'machined_edge_tls_refused_by_reason_total{reason="handshake_timeout"}': 8192,
    machined_process_heap_used_bytes: 25_000_000,
  });
  assert.deepEqual(metricValues(text, "machined_edge_tls_"), {
    'machined_edge_tls_refused_by_reason_total{reason="handshake_timeout"}': 8192,
  });
});
