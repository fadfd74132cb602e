import assert from "node:assert/strict";
import { parseMachineConfig } from "../../config/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type ResourceSpecs,
  TIME_STATUS,
  type TimeStatusSpec,
} from "../../resources/mod.ts";
import { ControllerRuntime, FakeClock, type ResourceOf, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import { FakeClockBackend, STA, toNanoseconds } from "../../platform/clock/mod.ts";
import { EventBus } from "../../events/mod.ts";
import { FakeNtpTransport } from "./ntp_transport_fake.ts";
import { startSntpResponder } from "./sntp_responder.ts";
import { UdpNtpTransport } from "./ntp_transport_udp.ts";
import { timeSyncController, type TimeSyncDeps } from "./time_sync.ts";
import { WallClockFake } from "./wall_clock_fake.ts";

const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

function config(time: string) {
  const r = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: n\n  time:\n${time}`, "t");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

/** A runtime on a fake clock with the sync controller over fakes; the local clock is an hour behind. */
function setup(deps: Partial<TimeSyncDeps> = {}) {
  const clock = new FakeClock(START);
  const store = new Store<ResourceSpecs>({ clock });
  const runtime = new ControllerRuntime(store, { clock });
  const backend = new FakeClockBackend(START - HOUR);
  const transport = new FakeNtpTransport();
  const events = new EventBus();
  runtime.register(timeSyncController({
    clock: backend,
    transport,
    events,
    resolve: (host) => Promise.resolve(host === "ntp.example" ? ["192.0.2.10"] : []),
    monotonic: () => 0,
    ...deps,
  }));
  const setConfig = (time: string) =>
    store.modify(
      { type: MACHINE_CONFIG, namespace: "config", id: MACHINE_CONFIG_ID },
      "test",
      () => ({ source: "test", config: config(time) }),
    );
  const status = (pred: (s: TimeStatusSpec) => boolean) =>
    waitForResource(
      store,
      TIME_STATUS,
      (r: ResourceOf<ResourceSpecs, "TimeStatus">) => pred(r.spec),
    );
  runtime.start();
  return { clock, store, runtime, backend, transport, events, setConfig, status };
}

const realtimeMs = (b: FakeClockBackend) => Number(toNanoseconds(b.read("realtime")) / 1_000_000n);

Deno.test("a clock an hour behind is stepped, marked synchronised and reported", async () => {
  const t = setup();
  try {
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: HOUR, stratum: 1 });
    await t.setConfig("    servers: [ntp.example]\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.server, "ntp.example");
    assert.equal(st.spec.address, "192.0.2.10");
    assert.equal(st.spec.correction, "step");
    assert.ok(Math.abs(st.spec.offsetMs! - HOUR) < 0.001, String(st.spec.offsetMs));
    assert.equal(st.spec.stratum, 1);
    assert.equal(st.spec.syncCount, 1);
    assert.equal(st.spec.lastError, "");
    assert.equal(st.spec.nextSync, START + 1_024_000, "default sync_interval 1024s");
    assert.equal(realtimeMs(t.backend), START, "stepped forward by the hour");
    const settime = t.backend.faults.callsOf("clock_settime");
    assert.equal(settime.length, 1);
    const adj = t.backend.faults.callsOf("adjtimex").at(-1)![0] as { status: number };
    assert.equal(adj.status, STA.PLL, "STA_UNSYNC cleared");
    assert.equal(t.backend.ntp.state, 0, "kernel reports TIME_OK");
    const actions = t.events.history().map((e) => e.action);
    assert.deepEqual(actions, ["stepped", "synced"]);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a small offset is slewed through the PLL, never stepped", async () => {
  const t = setup({ clock: new FakeClockBackend(START) });
  try {
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: 20 });
    await t.setConfig("    servers: [ntp.example]\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.correction, "slew");
    assert.ok(Math.abs(st.spec.offsetMs! - 20) < 0.001);
    assert.equal(t.transport.exchanges.length, 1);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("slew vs step honours a configured threshold", async () => {
  const backend = new FakeClockBackend(START);
  const t = setup({ clock: backend, stepThresholdMs: 10 });
  try {
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: 20 });
    await t.setConfig("    servers: [ntp.example]\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.correction, "step");
    assert.equal(backend.faults.callsOf("clock_settime").length, 1);
    const slews = backend.faults.callsOf("adjtimex").map((a) => a[0] as { offsetNs?: number });
    assert.ok(slews.every((r) => r.offsetNs === 0), "no slew, only the PLL reset");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("the servers are polled again every sync interval", async () => {
  const t = setup();
  try {
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: 0.5 });
    await t.setConfig("    servers: [ntp.example]\n    sync_interval: 64s\n");
    await t.status((s) => s.syncCount === 1);
    await t.clock.waitForSleepers(1);
    await t.clock.advance(63_000);
    assert.equal(t.transport.exchanges.length, 1, "not before the interval");
    await t.clock.advance(1_000);
    const st = await t.status((s) => s.syncCount === 2);
    assert.equal(st.spec.lastSync, START + 64_000);
    assert.equal(t.transport.exchanges.length, 2);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("an unreachable server is skipped for the next; all unreachable retries with backoff", async () => {
  const t = setup();
  try {
    t.transport.setServer("192.0.2.2", { kind: "reply", offsetMs: 1 });
    await t.setConfig("    servers: [192.0.2.1, 192.0.2.2]\n    sync_interval: 600s\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.server, "192.0.2.2");
    assert.match(st.spec.lastError, /No NTP reply from "192\.0\.2\.1"/);

    t.transport.setServer("192.0.2.2", { kind: "timeout" });
    await t.setConfig("    servers: [192.0.2.2, 192.0.2.1]\n    sync_interval: 600s\n");
    const failed = await t.status((s) => /192\.0\.2\.2.*192\.0\.2\.1/.test(s.lastError));
    assert.equal(failed.spec.syncCount, 1, "no new sync");
    assert.equal(failed.spec.synced, true, "still within four intervals of the last sync");
    assert.equal(failed.spec.nextSync, START + 2_000, "first retry after 2 s");
    await t.clock.waitForSleepers(1);
    const before = t.transport.exchanges.length;
    await t.clock.advance(2_000);
    await t.status((s) => s.nextSync === START + 2_000 + 4_000);
    assert.equal(t.transport.exchanges.length, before + 2, "retried both, then backs off to 4 s");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("synced turns false once the last sync is older than four intervals", async () => {
  const t = setup();
  try {
    t.transport.setServer("192.0.2.1", { kind: "reply", offsetMs: 1 });
    await t.setConfig("    servers: [192.0.2.1]\n    sync_interval: 10s\n");
    await t.status((s) => s.synced);
    t.transport.setServer("192.0.2.1", { kind: "timeout" });
    for (let i = 0; i < 8 && !t.events.history().some((e) => e.action === "unsynced"); i++) {
      await t.clock.waitForSleepers(1);
      await t.clock.advance(10_000);
      await t.status((s) => s.lastError !== "");
    }
    const st = await t.status((s) => !s.synced);
    assert.ok(t.clock.now() - st.spec.lastSync! > 40_000);
    assert.ok(t.events.history().some((e) => e.action === "unsynced"));
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("kiss-of-death RATE backs off from a server; DENY drops it until the config changes", async () => {
  const t = setup();
  try {
    t.transport
      .setServer("192.0.2.1", { kind: "reply", kiss: "RATE" })
      .setServer("192.0.2.2", { kind: "reply", kiss: "DENY" })
      .setServer("192.0.2.3", { kind: "reply", offsetMs: 2 });
    await t.setConfig("    servers: [192.0.2.1, 192.0.2.2, 192.0.2.3]\n    sync_interval: 16s\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.server, "192.0.2.3");
    assert.match(st.spec.lastError, /kiss-of-death "RATE".*kiss-of-death "DENY"/);
    assert.ok(t.events.history().some((e) => e.action === "server-dropped"));

    await t.clock.waitForSleepers(1);
    await t.clock.advance(16_000);
    const second = await t.status((s) => s.syncCount === 2);
    assert.equal(t.transport.exchangesWith("192.0.2.1").length, 1, "RATE: backing off (64 s)");
    assert.equal(t.transport.exchangesWith("192.0.2.2").length, 1, "DENY: never asked again");
    assert.match(second.spec.lastError, /"192\.0\.2\.2" dropped after kiss-of-death DENY/);

    for (let i = 0; i < 3; i++) {
      await t.clock.waitForSleepers(1);
      await t.clock.advance(16_000);
      await t.status((s) => s.syncCount === 3 + i);
    }
    assert.equal(t.transport.exchangesWith("192.0.2.1").length, 2, "asked again after 64 s");

    t.transport.setServer("192.0.2.2", { kind: "reply", offsetMs: 3 });
    await t.setConfig("    servers: [192.0.2.2]\n    sync_interval: 16s\n");
    const back = await t.status((s) => s.server === "192.0.2.2");
    assert.equal(back.spec.lastError, "", "a new config forgives the server");
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("disabled: status says so and the clock is never touched; enabling converges live", async () => {
  const t = setup();
  try {
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: HOUR });
    await t.setConfig("    disabled: true\n    servers: [ntp.example]\n");
    const st = await t.status((s) => s.disabled);
    assert.equal(st.spec.synced, false);
    assert.equal(st.spec.nextSync, null);
    assert.equal(t.transport.exchanges.length, 0);
    assert.equal(t.backend.faults.calls.length, 0, "no clock read, step or adjtimex");

    await t.setConfig("    servers: [ntp.example]\n");
    await t.status((s) => !s.disabled && s.synced);
    assert.equal(realtimeMs(t.backend), START);

    await t.setConfig("    disabled: true\n");
    const off = await t.status((s) => s.disabled);
    assert.equal(off.spec.syncCount, 1);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a clock that refuses the step is reported and retried", async () => {
  const t = setup();
  try {
    t.backend.faults.failNext("clock_settime", "EPERM");
    t.transport.setServer("192.0.2.10", { kind: "reply", offsetMs: HOUR });
    await t.setConfig("    servers: [ntp.example]\n");
    const st = await t.status((s) => /EPERM/.test(s.lastError));
    assert.equal(st.spec.synced, false);
    assert.match(st.spec.lastError, /Cannot correct the clock by 3600000 ms/);
    await t.clock.waitForSleepers(1);
    await t.clock.advance(2_000);
    await t.status((s) => s.synced);
    assert.equal(realtimeMs(t.backend), START);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("a name that does not resolve is an error naming it", async () => {
  const t = setup();
  try {
    await t.setConfig("    servers: [nowhere.example]\n");
    const st = await t.status((s) => s.lastError !== "");
    assert.match(st.spec.lastError, /Cannot resolve NTP server "nowhere\.example"/);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("an empty server list says so and touches nothing", async () => {
  const t = setup();
  try {
    await t.setConfig("    servers: []\n");
    const st = await t.status((s) => s.lastError !== "");
    assert.equal(st.spec.lastError, "no NTP servers configured");
    assert.equal(st.spec.synced, false);
    assert.equal(t.backend.faults.calls.length, 0);
  } finally {
    await t.runtime.stop();
  }
});

Deno.test("against the TS responder over loopback UDP", async () => {
  const responder = await startSntpResponder({ offsetMs: 250 });
  const backend = new WallClockFake(-HOUR);
  const t = setup({
    clock: backend,
    transport: new UdpNtpTransport(),
    port: responder.port,
    monotonic: undefined,
  });
  try {
    await t.setConfig("    servers: [127.0.0.1]\n");
    const st = await t.status((s) => s.synced);
    assert.equal(st.spec.correction, "step");
    // Server and client share one event loop: scheduling skews the loopback sample by a few ms.
    assert.ok(Math.abs(st.spec.offsetMs! - HOUR - 250) < 50, `offset ${st.spec.offsetMs}`);
    assert.equal(backend.faults.callsOf("clock_settime").length, 1);
    assert.ok(Math.abs(backend.shiftMs - 250) < 50, `now ${backend.shiftMs} ms off the host`);
    assert.equal(responder.requests, 1);
  } finally {
    await t.runtime.stop();
    await responder.close();
  }
});
