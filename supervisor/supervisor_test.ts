import assert from "node:assert/strict";
import { waitForAbsence } from "../runtime/testing.ts";
import { SERVICE_STATUS } from "../resources/mod.ts";
import type { HealthSpec } from "../resources/mod.ts";
import { serviceSpec, supervisorFixture } from "./testing.ts";
import { UnknownServiceError } from "./supervisor.ts";

const health = (overrides: Partial<HealthSpec> = {}): HealthSpec => ({
  probe: { kind: "tcp", address: "127.0.0.1:1" },
  intervalMs: 1000,
  timeoutMs: 500,
  startPeriodMs: 0,
  successThreshold: 1,
  failureThreshold: 1,
  restartWhenUnhealthy: false,
  ...overrides,
});

Deno.test("a crashing service backs off exponentially, capped, and resets after a long run", async () => {
  const f = supervisorFixture();
  try {
    let runFor = 0;
    f.process.define("/bin/crash", (p) => {
      if (runFor > 0) p.exitAfter(runFor, 1);
      else p.exit(1);
    });
    f.setSpec("crash", serviceSpec({ command: ["/bin/crash"] }));
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      const s = await f.status("crash", (s) => s.state === "backing-off" && s.restarts === i);
      assert.match(s.message, /exited with code 1; restarting in \d+ ms/);
      assert.equal(s.lastExit?.code, 1);
      await f.clock.waitForSleepers(1);
      const [delay] = f.clock.pendingDelays();
      delays.push(delay);
      // A run longer than resetAfterMs starts the backoff over.
      if (i === 4) runFor = 6000;
      await f.clock.advance(delay);
    }
    assert.deepEqual(delays, [100, 200, 400, 400, 400]);
    await f.status("crash", (s) => s.state === "running" && s.restarts === 5);
    await f.clock.advance(6000);
    await f.status("crash", (s) => s.state === "backing-off" && s.restarts === 5);
    assert.deepEqual(f.clock.pendingDelays(), [100]);
  } finally {
    await f.close();
  }
});

Deno.test("restart policies: on-failure stops after success, never stays failed", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/ok", (p) => p.exit(0)).define("/bin/bad", (p) => p.exit(3));
    f.setSpec("ok", serviceSpec({ command: ["/bin/ok"], restart: "on-failure" }));
    f.setSpec("bad", serviceSpec({ command: ["/bin/bad"], restart: "never" }));
    const ok = await f.status("ok", (s) => s.state === "finished");
    assert.equal(ok.lastExit?.code, 0);
    const bad = await f.status("bad", (s) => s.state === "failed");
    assert.equal(bad.message, "exited with code 3");
    assert.equal(f.process.processes.length, 2);
    // An explicit start runs a finished service again.
    f.supervisor.start("ok");
    await f.status("ok", (s) => s.state === "finished" && s.restarts === 1);
    assert.equal(f.process.processes.length, 3);
  } finally {
    await f.close();
  }
});

Deno.test("a program that cannot start backs off with the spawn error", async () => {
  const f = supervisorFixture();
  try {
    f.setSpec("ghost", serviceSpec({ command: ["/bin/missing"] }));
    const s = await f.status("ghost", (s) => s.state === "backing-off");
    assert.match(s.message, /^start failed: .*ENOENT/);
  } finally {
    await f.close();
  }
});

Deno.test("a dependent waits until its dependency's health check passes", async () => {
  let dbReady = false;
  const f = supervisorFixture({
    prober: () => dbReady ? Promise.resolve() : Promise.reject(new Error("connection refused")),
  });
  try {
    f.process.define("/bin/db").define("/bin/app");
    f.setSpec("app", serviceSpec({ command: ["/bin/app"], dependsOn: ["db"] }));
    f.setSpec("db", serviceSpec({ command: ["/bin/db"], health: health() }));
    // Until the probe first passes the service is `starting`, with the probe's complaint.
    const db = await f.status("db", (s) => s.message.includes("connection refused"));
    assert.equal(db.state, "starting");
    assert.equal(db.healthy, false);
    assert.equal(db.message, "waiting for the health check: connection refused");
    const app = await f.status("app", (s) => s.state === "waiting");
    assert.equal(app.message, 'waiting for "db" to be ready');
    assert.equal(f.process.processes.filter((p) => p.program === "/bin/app").length, 0);
    dbReady = true;
    await f.clock.advance(1000);
    const ready = await f.status("db", (s) => s.healthy);
    assert.equal(ready.message, "ready", "health and message change together");
    assert.equal(ready.state, "running");
    const running = await f.status("app", (s) => s.state === "running");
    assert.ok(running.pid !== null);
    // The readiness event says "ready", not the last failure, and precedes the dependent's start.
    const events = f.events.history().filter((e) => e.kind === "service");
    const dbReadyAt = events.findIndex((e) => e.subject === "db" && e.action === "ready");
    assert.equal(events[dbReadyAt].message, "ready");
    assert.ok(dbReadyAt < events.findIndex((e) => e.subject === "app" && e.action === "starting"));
  } finally {
    await f.close();
  }
});

Deno.test("a dependency on an unconfigured service waits and says so", async () => {
  const f = supervisorFixture();
  try {
    f.setSpec("app", serviceSpec({ dependsOn: ["containerd"] }));
    const s = await f.status("app", (s) => s.state === "waiting");
    assert.equal(s.message, 'waiting for "containerd" (not configured)');
  } finally {
    await f.close();
  }
});

Deno.test("dependency cycles fail the services on them with the cycle", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/svc");
    f.setSpec("a", serviceSpec({ dependsOn: ["b"] }));
    f.setSpec("b", serviceSpec({ dependsOn: ["a"] }));
    const a = await f.status("a", (s) => s.state === "failed");
    assert.equal(a.message, "dependency cycle: a → b → a");
    await f.status("b", (s) => s.state === "failed");
    assert.equal(f.process.processes.length, 0);
  } finally {
    await f.close();
  }
});

Deno.test("when a dependency dies, `restart` dependents stop and wait; `hold` ones keep running", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/svc", (p) => p.on("SIGTERM", (q) => q.exit(0)));
    f.setSpec("base", serviceSpec());
    f.setSpec("follower", serviceSpec({ dependsOn: ["base"] }));
    f.setSpec("holder", serviceSpec({ dependsOn: ["base"], onDependencyRestart: "hold" }));
    const holder = await f.status("holder", (s) => s.state === "running");
    await f.status("follower", (s) => s.state === "running");
    const base = f.process.running().find((p) => p.pid === f.supervisor.get("base").status.pid)!;
    base.exit(1);
    const follower = await f.status(
      "follower",
      (s) => s.state === "waiting" && s.message.includes("base"),
    );
    assert.equal(follower.lastExit?.code, 0);
    assert.equal(f.supervisor.get("holder").status.pid, holder.pid);
    await f.clock.advance(100); // base's backoff
    await f.status("follower", (s) => s.state === "running" && s.restarts === 1);
    assert.equal(f.supervisor.get("holder").status.pid, holder.pid);
    assert.equal(f.supervisor.get("holder").status.state, "running");
  } finally {
    await f.close();
  }
});

Deno.test("stop sends SIGTERM to the group, and SIGKILL after the grace period", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/stubborn", (p) => p.ignore("SIGTERM"));
    f.process.define("/bin/polite", (p) => p.on("SIGTERM", (q) => q.exit(0)));
    f.setSpec("stubborn", serviceSpec({ command: ["/bin/stubborn"], stopGraceMs: 5000 }));
    f.setSpec("polite", serviceSpec({ command: ["/bin/polite"] }));
    await f.status("stubborn", (s) => s.state === "running");
    await f.status("polite", (s) => s.state === "running");

    await f.supervisor.stop("polite");
    const polite = f.supervisor.get("polite").status;
    assert.equal(polite.state, "finished");
    assert.equal(polite.lastExit?.killedAfterGrace, false);
    const byProgram = (program: string) => f.process.processes.find((p) => p.program === program)!;
    assert.deepEqual(byProgram("/bin/polite").signals, ["SIGTERM"]);

    const stopping = f.supervisor.stop("stubborn");
    await f.status("stubborn", (s) => s.state === "stopping");
    await f.clock.waitForSleepers(1);
    assert.deepEqual(f.clock.pendingDelays(), [5000]);
    await f.clock.advance(5000);
    await stopping;
    const s = f.supervisor.get("stubborn").status;
    assert.equal(s.state, "finished");
    assert.equal(s.lastExit?.signal, "SIGKILL");
    assert.equal(s.lastExit?.killedAfterGrace, true);
    assert.match(s.message, /killed after the 5000 ms grace period/);
    assert.deepEqual(byProgram("/bin/stubborn").signals, ["SIGTERM", "SIGKILL"]);
    assert.ok(f.events.history().some((e) => e.subject === "stubborn" && e.action === "killed"));
    // Stopped services stay down until started.
    await f.clock.advance(60_000);
    assert.equal(f.process.running().length, 0);
    f.supervisor.start("stubborn");
    await f.status("stubborn", (s) => s.state === "running");
    const again = f.supervisor.stop("stubborn");
    await f.clock.waitForSleepers(1);
    await f.clock.advance(5000);
    await again;
  } finally {
    await f.close();
  }
});

Deno.test("stopAll stops dependents before their dependencies", async () => {
  const f = supervisorFixture();
  try {
    const order: string[] = [];
    f.process.define("/bin/svc", (p) =>
      p.on("SIGTERM", (q) => {
        order.push(q.spec.env!.NAME);
        q.exit(0);
      }));
    f.setSpec("c", serviceSpec({ env: { NAME: "c" } }));
    f.setSpec("b", serviceSpec({ env: { NAME: "b" }, dependsOn: ["c"] }));
    f.setSpec("a", serviceSpec({ env: { NAME: "a" }, dependsOn: ["b"] }));
    await f.status("a", (s) => s.state === "running");
    await f.supervisor.stopAll();
    assert.deepEqual(order, ["a", "b", "c"]);
    for (const s of f.supervisor.list()) assert.equal(s.status.state, "finished");
  } finally {
    await f.close();
  }
});

Deno.test("output is captured per service; cgroup limits are applied before spawn", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/talk", (p) => {
      p.writeLine("stdout", "hello");
      p.writeLine("stderr", "oops");
    });
    f.setSpec(
      "talk",
      serviceSpec({
        command: ["/bin/talk"],
        env: { A: "1" },
        limits: { memoryMax: 1 << 20, pidsMax: 10 },
      }),
    );
    await f.status("talk", (s) => s.state === "running");
    const lines: string[] = [];
    for await (
      const l of f.supervisor.logs("talk", { follow: true, signal: AbortSignal.timeout(2000) })
    ) {
      lines.push(`${l.stream}:${l.text}`);
      if (lines.length === 2) break;
    }
    assert.deepEqual(lines.sort(), ["stderr:oops", "stdout:hello"]);
    const spawned = f.process.processes[0].spec;
    assert.equal(spawned.cgroup, "/sys/fs/cgroup/machined/talk");
    assert.equal(spawned.newSession, true);
    assert.equal(spawned.env?.A, "1");
    assert.ok(spawned.env?.PATH);
    assert.deepEqual(await f.cgroups.read("talk"), { memoryMax: 1 << 20, pidsMax: 10 });
    assert.throws(() => f.supervisor.start("nope"), UnknownServiceError);
  } finally {
    await f.close();
  }
});

Deno.test("a changed spec restarts the service; a removed one is stopped and its status destroyed", async () => {
  const f = supervisorFixture();
  try {
    f.process.define("/bin/svc", (p) => p.on("SIGTERM", (q) => q.exit(0)));
    f.setSpec("x", serviceSpec({ env: { V: "1" } }));
    const first = await f.status("x", (s) => s.state === "running");
    f.setSpec("x", serviceSpec({ env: { V: "2" } }));
    const second = await f.status("x", (s) => s.state === "running" && s.pid !== first.pid);
    assert.equal(second.restarts, 1);
    assert.equal(f.process.running()[0].spec.env?.V, "2");
    f.removeSpec("x");
    await waitForAbsence(f.store, SERVICE_STATUS, (r) => r.metadata.id === "x");
    assert.equal(f.process.running().length, 0);
    assert.equal(f.cgroups.groups.has("x"), false);
  } finally {
    await f.close();
  }
});

Deno.test("restartWhenUnhealthy restarts a service whose probe keeps failing, with backoff", async () => {
  let answering = true;
  const f = supervisorFixture({
    prober: () => answering ? Promise.resolve() : Promise.reject(new Error("deadline exceeded")),
  });
  try {
    f.process.define("/bin/rt", (p) => p.on("SIGTERM", (q) => q.exit(0)));
    f.setSpec(
      "rt",
      serviceSpec({
        command: ["/bin/rt"],
        health: health({ failureThreshold: 2, restartWhenUnhealthy: true }),
      }),
    );
    const first = await f.status("rt", (s) => s.healthy);
    answering = false;
    await f.clock.advance(1000);
    await f.clock.waitForSleepers(1);
    await f.clock.advance(1000);
    const s = await f.status("rt", (s) => s.state === "backing-off");
    assert.match(s.message, /health check failing; restarting in 100 ms/);
    answering = true;
    await f.clock.advance(100);
    const again = await f.status("rt", (s) => s.healthy && s.pid !== first.pid);
    assert.equal(again.restarts, 1);
  } finally {
    await f.close();
  }
});

Deno.test("a throwing probe never escapes: the service is just unhealthy", async () => {
  const f = supervisorFixture({
    prober: () => {
      throw new TypeError("probe bug");
    },
  });
  try {
    f.process.define("/bin/svc");
    f.setSpec("x", serviceSpec({ health: health() }));
    const s = await f.status("x", (s) => s.message.includes("probe bug"));
    assert.equal(s.healthy, false);
    assert.equal(s.state, "starting", "it has never passed");
  } finally {
    await f.close();
  }
});

Deno.test("startIntervalMs probes quickly until the first pass within the start period", async () => {
  let passAt = Infinity;
  const f = supervisorFixture({
    prober: () => passAt <= 0 ? Promise.resolve() : Promise.reject(new Error("not yet")),
  });
  try {
    f.process.define("/bin/svc");
    f.setSpec(
      "fast",
      serviceSpec({ health: health({ startIntervalMs: 50, startPeriodMs: 10_000 }) }),
    );
    await f.status("fast", (s) => s.message.includes("not yet"));
    await f.clock.waitForSleepers(1);
    assert.deepEqual(f.clock.pendingDelays(), [50]);
    passAt = 0;
    await f.clock.advance(50);
    await f.status("fast", (s) => s.healthy);
    await f.clock.waitForSleepers(1);
    assert.deepEqual(f.clock.pendingDelays(), [1000]);
  } finally {
    await f.close();
  }
});

Deno.test("the start gate holds every service in waiting until recheck finds it open", async () => {
  let gate: string | undefined = "waiting for EPHEMERAL to be mounted at /var";
  const f = supervisorFixture({ startGate: () => gate });
  try {
    f.process.define("/bin/svc", () => {});
    f.setSpec("containerd", serviceSpec());
    f.setSpec("payload", serviceSpec({ dependsOn: ["containerd"] }));
    const held = await f.status("containerd", (s) => s.state === "waiting");
    assert.equal(held.message, gate);
    await f.status("payload", (s) => s.state === "waiting");
    assert.equal(f.process.processes.length, 0, "nothing started while the gate is shut");
    gate = undefined;
    f.supervisor.recheck();
    await f.status("containerd", (s) => s.state === "running");
    await f.status("payload", (s) => s.state === "running");
    // Shutting the gate again leaves running services alone; it only holds starts.
    gate = "shut again";
    f.supervisor.recheck();
    f.supervisor.restart("payload");
    await f.status("payload", (s) => s.state === "waiting" && s.message === "shut again");
    assert.equal(f.supervisor.get("containerd").status.state, "running");
  } finally {
    await f.close();
  }
});

Deno.test("a log file write failure is a ServiceStatus field and an event", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-logdir-" });
  await Deno.mkdir(`${dir}/talk.log`); // unwritable: a directory where the file goes
  const f = supervisorFixture({ logDir: dir });
  try {
    f.process.define("/bin/talk", (p) => p.writeLine("stdout", "hello"));
    f.setSpec("talk", serviceSpec({ command: ["/bin/talk"] }));
    const st = await f.status("talk", (s) => s.logFileError !== "");
    assert.match(st.logFileError, /cannot write .*talk\.log/);
    const ev = f.events.history().find((e) => e.action === "logFileFailed");
    assert.equal(ev?.subject, "talk");
    assert.equal(ev?.fields?.path, `${dir}/talk.log`);
  } finally {
    await f.close();
    await Deno.remove(dir, { recursive: true });
  }
});
