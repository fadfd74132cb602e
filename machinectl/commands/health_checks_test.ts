import { deepEqual, equal } from "node:assert/strict";
import { assessHealth, type HealthInput, healthy } from "./health_checks.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const DAY = 86_400_000;

const good: HealthInput = {
  machine: { stage: "running", ready: true, unmetConditions: [], pid1: true, mode: "node" },
  services: [{
    id: "containerd",
    spec: {
      state: "running",
      healthy: true,
      restarts: 0,
      pid: 7,
      lastExit: null,
      message: "",
      since: 0,
      logFileError: "",
      sandbox: null,
    },
  }],
  runtime: {
    ready: true,
    networkReady: true,
    runtimeName: "containerd",
    runtimeVersion: "2.0",
    runtimeApiVersion: "v1",
    socket: "/run/c.sock",
    lastError: "",
    lastProbe: 0,
    lastAnswer: 0,
  },
  time: {
    disabled: false,
    synced: true,
    server: "pool.ntp.org",
    address: "192.0.2.1",
    offsetMs: 0.5,
    delayMs: 1,
    stratum: 2,
    correction: null,
    lastSync: 0,
    syncCount: 1,
    nextSync: null,
    lastError: "",
  } as unknown as HealthInput["time"],
  certificates: [{ name: "client", notAfter: new Date(NOW + 365 * DAY) }],
};

const statuses = (h: HealthInput) =>
  Object.fromEntries(assessHealth(h, NOW).map((c) => [c.check, c.status]));

Deno.test("health: a good node is ok on every line, in order", () => {
  const checks = assessHealth(good, NOW);
  deepEqual(checks.map((c) => c.check), [
    "stage",
    "service containerd",
    "runtime (CRI)",
    "time sync",
    "certificate client",
    "upgrade",
  ]);
  equal(checks.every((c) => c.status === "ok"), true, JSON.stringify(checks));
  equal(healthy(checks), true);
});

Deno.test("health: each failure fails the whole", () => {
  const cases: [string, HealthInput][] = [
    ["stage", { ...good, machine: { ...good.machine!, ready: false, stage: "booting" } }],
    ["stage", { ...good, machine: undefined }],
    ["service containerd", {
      ...good,
      services: [{ id: "containerd", spec: { ...good.services[0].spec, state: "failed" } }],
    }],
    ["runtime (CRI)", { ...good, runtime: { ...good.runtime!, ready: false, lastError: "x" } }],
    ["time sync", { ...good, time: { ...good.time!, synced: false } }],
    ["certificate client", {
      ...good,
      certificates: [{ name: "client", notAfter: new Date(NOW) }],
    }],
  ];
  for (const [check, h] of cases) {
    equal(statuses(h)[check], "fail", check);
    equal(healthy(assessHealth(h, NOW)), false, check);
  }
});

Deno.test("health: a runtime that is ready without a pod network warns, as on the default node", () => {
  const h: HealthInput = { ...good, runtime: { ...good.runtime!, networkReady: false } };
  equal(statuses(h)["runtime (CRI)"], "warn");
  equal(healthy(assessHealth(h, NOW)), true);
});

Deno.test("health: warnings do not fail: near expiry, a slot on trial, no runtime", () => {
  const h: HealthInput = {
    ...good,
    runtime: undefined,
    certificates: [{ name: "node CA", notAfter: new Date(NOW + 29 * DAY + 1) }],
    upgrade: {
      booted: "B",
      slots: [{
        slot: "B",
        booted: true,
        state: "trial",
        version: "2.0.0",
        generation: 2,
        triesLeft: 2,
        entry: "b",
      }],
      floor: "",
      floorSource: "none",
      storedFloor: "",
      last: { outcome: "armed", version: "2.0.0", slot: "B", reason: "", at: "" },
    } as unknown as HealthInput["upgrade"],
  };
  const s = statuses(h);
  deepEqual([s["runtime (CRI)"], s["certificate node CA"], s.upgrade], ["warn", "warn", "warn"]);
  equal(healthy(assessHealth(h, NOW)), true);
  equal(
    assessHealth(h, NOW).find((c) => c.check === "upgrade")?.detail,
    "slot B (2.0.0) on trial, 2 tries left",
  );
});
