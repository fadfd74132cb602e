import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";
import {
  AccessError,
  type Controller,
  type ReconcileContext,
  RegistrationError,
} from "./controller.ts";
import { ControllerRuntime, type ControllerStats } from "./runtime.ts";
import { Store } from "./store.ts";
import { statsRecorder, waitForAbsence, waitForResource } from "./testing.ts";

type Cat = {
  Spec: { value: number };
  Status: { value: number };
  Final: { value: number };
  Other: { value: number };
};
type Ctx = ReconcileContext<Cat>;

function controller(
  partial: Partial<Controller<Cat>> & Pick<Controller<Cat>, "name">,
): Controller<Cat> {
  return { inputs: [], outputs: [], reconcile: async () => {}, ...partial };
}

/** Copies every Spec into a Status with the same id (value + 1). */
const specToStatus = controller({
  name: "test.SpecToStatus",
  inputs: [{ type: "Spec", kind: "weak" }],
  outputs: [{ type: "Status", kind: "exclusive" }],
  async reconcile(ctx: Ctx) {
    for (const spec of ctx.list("Spec")) {
      await ctx.apply({ type: "Status", namespace: "ns", id: spec.metadata.id }, {
        value: spec.spec.value + 1,
      });
    }
  },
});

function setup(options: ConstructorParameters<typeof ControllerRuntime<Cat>>[1] = {}) {
  const store = new Store<Cat>({ clock: options.clock });
  const runtime = new ControllerRuntime(store, options);
  return { store, runtime };
}

Deno.test("registration rejects two exclusive owners and duplicate names", () => {
  const { runtime } = setup();
  runtime.register(specToStatus);
  assert.throws(() => runtime.register(specToStatus), RegistrationError);
  assert.throws(
    () =>
      runtime.register(controller({ name: "b", outputs: [{ type: "Status", kind: "shared" }] })),
    /already owns it exclusively/,
  );
  runtime.register(controller({ name: "c", outputs: [{ type: "Other", kind: "shared" }] }));
  runtime.register(controller({ name: "d", outputs: [{ type: "Other", kind: "shared" }] }));
  assert.throws(
    () =>
      runtime.register(controller({ name: "e", outputs: [{ type: "Other", kind: "exclusive" }] })),
    RegistrationError,
  );
});

Deno.test("input changes trigger reconcile and outputs follow", async () => {
  const { store, runtime } = setup();
  runtime.register(specToStatus);
  runtime.start();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 1 }, owner: "user" });
  const st = await waitForResource(store, "Status", (r) => r.spec.value === 2);
  assert.equal(st.metadata.owner, "test.SpecToStatus");
  await store.modify({ type: "Spec", namespace: "ns", id: "a" }, "user", () => ({ value: 41 }));
  await waitForResource(store, "Status", (r) => r.spec.value === 42);
  await runtime.stop();
});

Deno.test("outputs not kept by a cycle are garbage collected, honouring finalizers", async () => {
  const { store, runtime } = setup();
  runtime.register(specToStatus);
  runtime.start();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 1 }, owner: "user" });
  await waitForResource(store, "Status", (r) => r.metadata.id === "a");
  store.addFinalizer({ type: "Status", namespace: "ns", id: "a" }, "holder");
  store.destroy({ type: "Spec", namespace: "ns", id: "a" }, "user");
  await waitForResource(store, "Status", (r) => r.metadata.phase === "tearingDown");
  assert.ok(store.find("Status", "ns", "a"), "a finalizer keeps it");
  store.removeFinalizer({ type: "Status", namespace: "ns", id: "a" }, "holder");
  await waitForAbsence(store, "Status", (r) => r.metadata.id === "a");
  await runtime.stop();
});

Deno.test("reads outside inputs and writes outside outputs throw AccessError", async () => {
  const { store, runtime } = setup();
  const errors: unknown[] = [];
  runtime.register(controller({
    name: "test.Nosy",
    inputs: [{ type: "Spec", kind: "weak" }],
    outputs: [{ type: "Status", kind: "exclusive" }],
    async reconcile(ctx) {
      try {
        ctx.list("Other");
      } catch (e) {
        errors.push(e);
      }
      try {
        await ctx.apply({ type: "Final", namespace: "ns", id: "x" }, { value: 1 });
      } catch (e) {
        errors.push(e);
      }
      try {
        ctx.addFinalizer({ type: "Spec", namespace: "ns", id: "x" });
      } catch (e) {
        errors.push(e);
      }
      await ctx.apply({ type: "Status", namespace: "ns", id: "done" }, { value: 1 });
    },
  }));
  runtime.start();
  await waitForResource(store, "Status", () => true);
  await runtime.stop();
  assert.equal(errors.length, 3);
  assert.ok(errors.every((e) => e instanceof AccessError));
  assert.match(String(errors[0]), /may not read resources of type "Other"/);
  assert.match(String(errors[1]), /may not write resources of type "Final"/);
  assert.match(String(errors[2]), /may not finalize/);
});

Deno.test("a controller cannot overwrite a resource another owner wrote", async () => {
  let failedOnce!: (s: ControllerStats) => void;
  const failed = new Promise<ControllerStats>((r) => failedOnce = r);
  const { store, runtime } = setup({ onStats: (s) => s.failures > 0 && failedOnce(s) });
  store.create({ type: "Status", namespace: "ns", id: "a", spec: { value: 0 }, owner: "someone" });
  runtime.register(specToStatus);
  runtime.start();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 1 }, owner: "user" });
  const stats = await failed;
  assert.match(stats.lastError ?? "", /owned by "someone"/);
  assert.equal(store.get("Status", "ns", "a").spec.value, 0);
  await runtime.stop();
});

Deno.test("changes during a running reconcile are coalesced into one more cycle", async () => {
  let secondDone!: () => void;
  const second = new Promise<void>((r) => secondDone = r);
  const { store, runtime } = setup({
    onStats: (s) => s.reconciles === 2 && s.state === "idle" && secondDone(),
  });
  let calls = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let entered!: () => void;
  const inFirst = new Promise<void>((r) => entered = r);
  runtime.register(controller({
    name: "test.Slow",
    inputs: [{ type: "Spec", kind: "weak" }],
    outputs: [{ type: "Status", kind: "exclusive" }],
    async reconcile(ctx) {
      calls++;
      if (calls === 1) {
        entered();
        await gate;
      }
      const total = ctx.list("Spec").reduce((a, r) => a + r.spec.value, 0);
      await ctx.apply({ type: "Status", namespace: "ns", id: "sum" }, { value: total });
    },
  }));
  runtime.start();
  await inFirst;
  for (let i = 0; i < 20; i++) {
    store.create({ type: "Spec", namespace: "ns", id: `s${i}`, spec: { value: 1 }, owner: "u" });
  }
  release();
  await second;
  assert.equal(store.get("Status", "ns", "sum").spec.value, 20);
  assert.equal(calls, 2, "twenty changes during cycle 1 led to exactly one more cycle");
  await runtime.stop();
});

Deno.test("periodic resync runs without input changes (fake clock)", async () => {
  const clock = new FakeClock();
  const { runtime } = setup({ clock });
  let calls = 0;
  runtime.register(controller({
    name: "test.Periodic",
    resyncInterval: 60_000,
    reconcile() {
      calls++;
      return Promise.resolve();
    },
  }));
  runtime.start();
  await clock.waitForSleepers(1);
  assert.equal(calls, 1);
  await clock.advance(59_000);
  assert.equal(calls, 1);
  await clock.advance(1_000);
  await clock.waitForSleepers(1);
  assert.equal(calls, 2);
  await runtime.stop();
});

Deno.test("failures back off exponentially with a cap, and reset after success", async () => {
  const clock = new FakeClock();
  const rec = statsRecorder();
  const stats = rec.seen;
  const { runtime } = setup({
    clock,
    backoff: { initialMs: 100, maxMs: 800, factor: 2 },
    onStats: rec.onStats,
  });
  let calls = 0;
  let failUntil = 6;
  runtime.register(controller({
    name: "test.Flaky",
    reconcile() {
      calls++;
      if (calls <= failUntil) return Promise.reject(new Error(`boom ${calls}`));
      return Promise.resolve();
    },
  }));
  runtime.start();
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    await clock.waitForSleepers(1);
    const [d] = clock.pendingDelays();
    delays.push(d);
    const next = rec.next((s) => s.state === "idle");
    await clock.advance(d);
    await next;
  }
  assert.deepEqual(delays, [100, 200, 400, 800, 800, 800]);
  const last = runtime.stats()[0];
  assert.equal(last.consecutiveFailures, 0);
  assert.equal(last.failures, 6);
  assert.ok(stats.some((s) => s.state === "backoff" && s.lastError === "boom 3"));
  // After the success, the next failure starts again at the initial delay.
  failUntil = 8;
  runtime.trigger("test.Flaky");
  await clock.waitForSleepers(1);
  assert.deepEqual(clock.pendingDelays(), [100]);
  await runtime.stop();
});

Deno.test("a throwing or hanging controller does not stop the others", async () => {
  const { store, runtime } = setup({ reconcileTimeoutMs: 50 });
  runtime.register(
    controller({ name: "test.Throws", reconcile: () => Promise.reject(new Error("x")) }),
  );
  runtime.register(controller({ name: "test.Hangs", reconcile: () => new Promise(() => {}) }));
  runtime.register(specToStatus);
  runtime.start();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 1 }, owner: "user" });
  await waitForResource(store, "Status", (r) => r.spec.value === 2);
  await new Promise((r) => setTimeout(r, 120));
  const hang = runtime.stats().find((s) => s.name === "test.Hangs")!;
  assert.match(hang.lastError ?? "", /timed out/);
  await runtime.stop();
});

Deno.test("requeueAfter schedules another cycle", async () => {
  const clock = new FakeClock();
  const rec = statsRecorder();
  const { runtime } = setup({ clock, onStats: rec.onStats });
  let calls = 0;
  runtime.register(controller({
    name: "test.Timer",
    reconcile(ctx) {
      calls++;
      if (calls === 1) ctx.requeueAfter(5_000);
      return Promise.resolve();
    },
  }));
  runtime.start();
  await clock.waitForSleepers(1);
  const second = rec.next((s) => s.reconciles === 2 && s.state === "idle");
  await clock.advance(5_000);
  await second;
  assert.equal(calls, 2);
  await runtime.stop();
});

Deno.test("the dependency graph lists who reads and writes what", () => {
  const { runtime } = setup();
  runtime.register(specToStatus);
  runtime.register(controller({
    name: "test.StatusToFinal",
    inputs: [{ type: "Status", kind: "strong" }],
    outputs: [{ type: "Final", kind: "exclusive" }],
  }));
  const g = runtime.graph();
  assert.deepEqual(g.edges, [{
    from: "test.SpecToStatus",
    to: "test.StatusToFinal",
    type: "Status",
  }]);
  assert.equal(g.controllers.length, 2);
  for (const c of g.controllers) assert.deepEqual(runtime.declaration(c.name), c);
  assert.equal(runtime.declaration("test.Nobody"), undefined);
});

Deno.test("a chain of three controllers converges and stop is graceful", async () => {
  const { store, runtime } = setup();
  runtime.register(specToStatus);
  runtime.register(controller({
    name: "test.StatusToFinal",
    inputs: [{ type: "Status", kind: "strong" }],
    outputs: [{ type: "Final", kind: "exclusive" }],
    async reconcile(ctx) {
      for (const st of ctx.list("Status")) {
        const p = { type: "Final" as const, namespace: "ns", id: st.metadata.id };
        if (st.metadata.phase === "tearingDown") {
          ctx.remove(p);
          ctx.removeFinalizer(st.metadata);
          continue;
        }
        ctx.addFinalizer(st.metadata);
        await ctx.apply(p, { value: st.spec.value * 10 });
      }
    },
  }));
  runtime.start();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 1 }, owner: "u" });
  await waitForResource(store, "Final", (r) => r.spec.value === 20);
  store.destroy({ type: "Spec", namespace: "ns", id: "a" }, "u");
  await waitForAbsence(store, "Status", () => true);
  await waitForAbsence(store, "Final", () => true);
  await runtime.stop();
  assert.ok(runtime.stats().every((s) => s.state === "stopped"));
  assert.equal(store.watchCount, 0);
});

Deno.test("a controller's external watch wakes it; stop ends the watch", async () => {
  const rec = statsRecorder();
  const { runtime } = setup({ onStats: rec.onStats });
  let wakeUp!: () => void;
  let watchEnded = false;
  runtime.register(controller({
    name: "test.External",
    watch: async (wake, signal) => {
      wakeUp = wake;
      await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
      watchEnded = true;
    },
  }));
  runtime.start();
  await rec.next((s) => s.reconciles === 1 && s.state === "idle");
  const second = rec.next((s) => s.reconciles === 2 && s.state === "idle");
  wakeUp();
  await second;
  await runtime.stop();
  assert.ok(watchEnded);
});

Deno.test("a failed external watch is counted, wakes the controller and starts again", async () => {
  const rec = statsRecorder();
  const { runtime } = setup({
    onStats: rec.onStats,
    watchBackoff: { initialMs: 1, maxMs: 1, factor: 1 },
  });
  let starts = 0;
  let live!: () => void;
  const secondStart = new Promise<void>((r) => (live = r));
  let reconciled!: () => void;
  const firstReconcile = new Promise<void>((r) => (reconciled = r));
  runtime.register(controller({
    name: "test.FlakyWatch",
    reconcile: () => Promise.resolve(reconciled()),
    watch: async (_wake, signal) => {
      if (++starts === 1) {
        await firstReconcile;
        throw new Error("uevent socket: ENOBUFS");
      }
      live();
      await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
    },
  }));
  runtime.start();
  await secondStart;
  await runtime.stop();
  assert.equal(starts, 2);
  const woken = rec.seen.filter((s) => s.watchFailures === 1 && s.reconciles >= 2);
  assert.ok(woken.length > 0, "the failure woke a reconcile");
  assert.equal(runtime.stats()[0].watchFailures, 1);
});

Deno.test("a controller that keeps re-triggering itself never starves timers", async () => {
  const { store, runtime } = setup();
  store.create({ type: "Spec", namespace: "ns", id: "a", spec: { value: 0 }, owner: "loop" });
  runtime.register(controller({
    name: "test.SelfTrigger",
    inputs: [{ type: "Status", kind: "weak" }],
    outputs: [{ type: "Status", kind: "exclusive" }],
    async reconcile(ctx) {
      const cur = ctx.find("Status", "ns", "n")?.spec.value ?? 0;
      await ctx.apply({ type: "Status", namespace: "ns", id: "n" }, { value: cur + 1 });
    },
  }));
  runtime.start();
  // If cycles only ever chained through promise callbacks, this timer would never fire.
  await new Promise((r) => setTimeout(r, 20));
  await runtime.stop();
  assert.ok(store.get("Status", "ns", "n").spec.value > 32);
});
