import { deepEqual, equal, ok } from "node:assert/strict";
import {
  type DashboardAction,
  type DashboardState,
  EVENT_LINES,
  HISTORY_SAMPLES,
  initialState,
  reduce,
} from "./state.ts";

const T0 = new Date(2026, 0, 1, 12, 0, 0).getTime();

function run(actions: DashboardAction[], s: DashboardState = initialState("n:50000", T0)) {
  return actions.reduce(reduce, s);
}

const sample = (cpu: number | null, used: number) => ({
  type: "sample" as const,
  sample: { cpu, cores: 2, perCore: [], load1: 0.5, memUsedBytes: used, memTotalBytes: 1000 },
});

const event = (seq: number, subject = "payload") => ({
  type: "event" as const,
  event: { seq, time: T0, kind: "service", subject, action: "ready", message: "" },
});

Deno.test("reducer: stage, hostname, services from Watch; destroyed rows go", () => {
  const s = run([
    { type: "boot", bootKey: "b1", startedAt: T0 },
    { type: "machineStatus", stage: "running", ready: true, unmet: [], mode: "dev" },
    { type: "hostname", hostname: "node-1" },
    { type: "version", version: "0.1.0", hostname: "ignored-once-known" },
    {
      type: "service",
      row: { id: "a", state: "running", healthy: true, restarts: 0, pid: 1, message: "" },
    },
    {
      type: "service",
      row: { id: "b", state: "waiting", healthy: false, restarts: 0, pid: null, message: "" },
    },
    {
      type: "service",
      row: { id: "a", state: "backing-off", healthy: false, restarts: 1, pid: null, message: "" },
    },
    { type: "serviceGone", id: "b" },
  ]);
  equal(s.stage, "running");
  equal(s.hostname, "node-1");
  equal(s.version, "0.1.0");
  deepEqual([...s.services.keys()], ["a"]);
  equal(s.services.get("a")?.restarts, 1);
  equal(s.rebootedAt, null);
});

Deno.test("reducer: a reconnect to the same boot keeps history and skips replayed events and logs", () => {
  const before = run([
    { type: "boot", bootKey: "b1", startedAt: T0 },
    event(1),
    event(2),
    { type: "log", line: { seq: 7, time: T0, text: "x" } },
    sample(0.5, 500),
  ]);
  const after = run([
    { type: "disconnected", attempt: 1, error: "gone", retryAt: T0 + 250 },
    { type: "connected", endpoint: "n:50000", at: T0 + 300 },
    { type: "boot", bootKey: "b1", startedAt: T0 },
    event(1),
    event(2),
    event(3),
    { type: "log", line: { seq: 7, time: T0, text: "x" } },
    { type: "log", line: { seq: 8, time: T0, text: "y" } },
  ], before);
  deepEqual(after.events.map((e) => e.seq), [1, 2, 3]);
  deepEqual(after.logs.map((l) => l.text), ["x", "y"]);
  deepEqual(after.cpu, [0.5]);
  equal(after.rebootedAt, null);
  equal(after.link.kind, "connected");
});

Deno.test("reducer: a new boot resets history, events, logs and services and says when", () => {
  const before = run([
    { type: "boot", bootKey: "b1", startedAt: T0 },
    { type: "machineStatus", stage: "running", ready: true, unmet: [], mode: "dev" },
    { type: "hostname", hostname: "node-1" },
    event(40),
    sample(0.5, 500),
    {
      type: "service",
      row: { id: "a", state: "running", healthy: true, restarts: 3, pid: 1, message: "" },
    },
  ]);
  const after = run([{ type: "boot", bootKey: "b2", startedAt: T0 + 60_000 }, event(1)], before);
  equal(after.rebootedAt, T0 + 60_000);
  equal(after.bootKey, "b2");
  deepEqual(after.events.map((e) => e.seq), [1], "the new boot's seq 1 is not a replay");
  deepEqual([after.cpu, after.mem, after.logs, after.services.size], [[], [], [], 0]);
  equal(after.stage, null);
  equal(after.hostname, "node-1", "the name stays until the new boot says otherwise");
});

Deno.test("reducer: samples build bounded CPU and memory histories; the first CPU reading has no value", () => {
  let s = run([sample(null, 250)]);
  deepEqual([s.cpu, s.mem], [[], [0.25]]);
  for (let i = 0; i < HISTORY_SAMPLES + 10; i++) s = reduce(s, sample(i / 1000, 500));
  equal(s.cpu.length, HISTORY_SAMPLES);
  equal(s.mem.length, HISTORY_SAMPLES);
  equal(s.cpu.at(-1), (HISTORY_SAMPLES + 9) / 1000);
  s = reduce(s, { type: "sampleError", error: "no Stats" });
  equal(s.sampleError, "no Stats");
  ok(reduce(s, sample(0.1, 1)).sampleError === null);
});

Deno.test("reducer: events are bounded; overflow markers (seq 0) are kept", () => {
  let s = initialState("n", T0);
  for (let i = 1; i <= EVENT_LINES + 5; i++) s = reduce(s, event(i));
  equal(s.events.length, EVENT_LINES);
  equal(s.events[0].seq, 6);
  s = reduce(s, { ...event(0), event: { ...event(0).event, kind: "overflow" } });
  equal(s.events.at(-1)?.kind, "overflow");
});

Deno.test("reducer: the state passed in is never changed", () => {
  const s = run([{ type: "boot", bootKey: "b1", startedAt: T0 }]);
  const frozen = JSON.stringify({ ...s, services: [...s.services] });
  reduce(s, event(1));
  reduce(s, { type: "boot", bootKey: "b2", startedAt: T0 });
  equal(JSON.stringify({ ...s, services: [...s.services] }), frozen);
});
