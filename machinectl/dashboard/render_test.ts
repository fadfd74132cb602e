import { deepEqual, equal, match, ok } from "node:assert/strict";
import { renderDashboard } from "./render.ts";
import { sparkline } from "./sparkline.ts";
import { type DashboardAction, initialState, reduce } from "./state.ts";

const T0 = new Date(2026, 0, 1, 12, 0, 0).getTime();

function state(extra: DashboardAction[] = []) {
  const actions: DashboardAction[] = [
    { type: "boot", bootKey: "b1", startedAt: T0 },
    { type: "connected", endpoint: "10.0.0.5:50000", at: T0 },
    { type: "version", version: "0.1.0", hostname: "node-1" },
    { type: "machineStatus", stage: "running", ready: true, unmet: [], mode: "node" },
    {
      type: "service",
      row: { id: "payload", state: "waiting", healthy: false, restarts: 0, pid: null, message: "" },
    },
    {
      type: "service",
      row: {
        id: "containerd",
        state: "running",
        healthy: true,
        restarts: 2,
        pid: 812,
        message: "running",
      },
    },
    {
      type: "event",
      event: {
        seq: 1,
        time: T0 + 1_000,
        kind: "service",
        subject: "containerd",
        action: "ready",
        message: "running",
      },
    },
    { type: "log", line: { seq: 1, time: T0, text: "[info] apid: ready port=50000" } },
    { type: "tick", now: T0 + 5_000 },
    ...extra,
  ];
  return actions.reduce(reduce, initialState("10.0.0.5:50000", T0));
}

Deno.test("renderDashboard: the whole screen at 80x24", () => {
  const s = state([
    {
      type: "sample",
      sample: {
        cpu: 0.5,
        cores: 2,
        perCore: [0.25, 0.75],
        load1: 0.75,
        memUsedBytes: 512 << 20,
        memTotalBytes: 2 * 1024 ** 3,
      },
    },
  ]);
  const rows = renderDashboard(s, { width: 80, height: 24 });
  equal(rows.length, 15, "rows past the last log line stay for the terminal to clear");
  ok(rows.every((r) => [...r].length <= 80), "no row is wider than the screen");
  equal(rows[0], "node-1  10.0.0.5:50000  machined 0.1.0" + " ".repeat(34) + "12:00:05");
  equal(rows[1], "stage running   ready   mode node");
  equal(rows[2], "connected since 12:00:00");
  equal(rows[4], `CPU  ${" ".repeat(39)}▅  50%  load 0.75  2 cores ▃▇`, "one cell per core");
  equal(rows[5], `MEM  ${" ".repeat(39)}▃  25%  512.0 MiB / 2.0 GiB`);
  match(rows[7], /^─ SERVICES ─+$/);
  match(rows[8], /^ {2}ID +STATE +HEALTH +RESTARTS +PID +MESSAGE$/);
  equal(rows[9], "  containerd  running      ok      2         812      running");
  equal(rows[10], "  payload     waiting      -       0         -        ");
  match(rows[11], /^─ EVENTS ─+$/);
  match(rows[12], /^12:00:01 {2}service {2}containerd +ready +running$/);
  const logs = rows.findIndex((r) => r.startsWith("─ LOGS (machined) "));
  ok(logs > 12);
  equal(rows[logs + 1], "[info] apid: ready port=50000");
});

Deno.test("renderDashboard: not ready lists the unmet conditions; no sample yet says so", () => {
  const s = state([{
    type: "machineStatus",
    stage: "booting",
    ready: false,
    unmet: [{ name: "network", reason: "no address" }, { name: "time", reason: "" }],
    mode: "node",
  }]);
  const rows = renderDashboard(s, { width: 100, height: 30 });
  equal(rows[1], "stage booting   NOT READY: network (no address), time   mode node");
  equal(rows[4], "CPU  waiting for a sample");
  const noStats = reduce(s, { type: "sampleError", error: "Unimplemented: no Stats" });
  equal(
    renderDashboard(noStats, { width: 100, height: 30 })[5],
    "MEM  unavailable: Unimplemented: no Stats",
  );
});

Deno.test("renderDashboard: reconnecting, then rebooted at the new boot's start", () => {
  let s = reduce(state(), {
    type: "disconnected",
    attempt: 3,
    error: "cannot reach the node: ECONNREFUSED",
    retryAt: T0 + 7_000,
  });
  let rows = renderDashboard(s, { width: 100, height: 30 });
  equal(rows[1], "stage running (last seen)   ready   mode node");
  equal(rows[2], "reconnecting… (attempt 3, next in 2 s): cannot reach the node: ECONNREFUSED");
  s = [
    { type: "connected", endpoint: "10.0.0.5:50000", at: T0 + 8_000 },
    { type: "boot", bootKey: "b2", startedAt: T0 + 6_000 },
  ].reduce((x, a) => reduce(x, a as DashboardAction), s);
  rows = renderDashboard(s, { width: 100, height: 30 });
  equal(rows[2], "connected since 12:00:08   rebooted at 12:00:06");
  equal(rows[1], "stage ?   mode node");
  equal(rows[8], "  (no services)");
});

Deno.test("renderDashboard: newest events and logs win when space is short; tiny screens stay in bounds", () => {
  const many: DashboardAction[] = [];
  for (let i = 2; i <= 50; i++) {
    many.push({
      type: "event",
      event: { seq: i, time: T0, kind: "task", subject: `t${i}`, action: "done", message: "" },
    });
    many.push({ type: "log", line: { seq: i, time: T0, text: `line ${i}` } });
  }
  const rows = renderDashboard(state(many), { width: 80, height: 24 });
  const ev = rows.findIndex((r) => r.startsWith("─ EVENTS"));
  const lg = rows.findIndex((r) => r.startsWith("─ LOGS"));
  match(rows[lg - 1], / t50 /);
  equal(rows.at(-1), "line 50");
  ok(lg - ev > 2 && rows.length - lg > 2, "both get rows");
  for (const [w, h] of [[20, 1], [30, 5], [10, 3]]) {
    const r = renderDashboard(state(many), { width: w, height: h });
    ok(r.length <= h && r.every((x) => [...x].length <= Math.max(20, w)), `${w}x${h}`);
  }
});

Deno.test("renderDashboard: control characters in a log line are shown escaped, never sent; long rows end in …", () => {
  const rows = renderDashboard(
    state([{
      type: "log",
      line: { seq: 2, time: T0, text: `evil\x1b[2Jline\u009b ${"x".repeat(200)}` },
    }]),
    { width: 60, height: 24 },
  );
  const line = rows.find((r) => r.startsWith("evil"))!;
  equal(line, "evil\\x1b[2Jline\\x9b " + "x".repeat(39) + "…");
});

Deno.test("sparkline: newest right, padded left, clamped, one cell per value", () => {
  equal(sparkline([0, 0.5, 1], 5), "  ▁▅█");
  equal(sparkline([0.1, 0.2, 0.3, 0.4], 2), "▃▄");
  equal(sparkline([-1, 2, NaN], 3), "▁█▁");
  equal(sparkline([1], 0), "");
  deepEqual([...sparkline(Array(100).fill(0.5), 40)].length, 40);
});

Deno.test("renderDashboard: a stream the node refuses is named in its section's title", () => {
  const s = reduce(state(), { type: "refused", stream: "logs", error: "Unimplemented: no logs" });
  const rows = renderDashboard(s, { width: 100, height: 30 });
  ok(rows.some((r) => /^─ LOGS \(machined\): unavailable: Unimplemented: no logs ─+$/.test(r)));
  ok(rows.some((r) => /^─ EVENTS ─+$/.test(r)));
});
