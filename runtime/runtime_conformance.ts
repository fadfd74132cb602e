/**
 * The controller runtime's contract as a reusable suite, COSI-style: a
 * controller reads and writes only what it declares, reconciles when an input
 * changes, and backs off after failures. Any runtime built over a store with
 * {@link RuntimeFactory} must pass it. Run it from a `*_test.ts`.
 * @module
 */
import assert from "node:assert/strict";
import { FakeClock } from "./clock.ts";
import { AccessError, type Controller } from "./controller.ts";
import type { ControllerRuntime, RuntimeOptions } from "./runtime.ts";
import { Store } from "./store.ts";
import { statsRecorder, waitForResource } from "./testing.ts";

/** The catalog the suite's controllers use. */
export type RuntimeCatalog = {
  In: { value: number };
  Out: { value: number };
  Other: { value: number };
};

/** Builds the runtime under test over `store`. */
export type RuntimeFactory = (
  store: Store<RuntimeCatalog>,
  options: RuntimeOptions,
) => ControllerRuntime<RuntimeCatalog>;

type C = Controller<RuntimeCatalog>;

const copier = (onReconcile: () => void = () => {}): C => ({
  name: "conformance.Copier",
  inputs: [{ type: "In", kind: "weak" }],
  outputs: [{ type: "Out", kind: "exclusive" }],
  async reconcile(ctx) {
    onReconcile();
    for (const r of ctx.list("In")) {
      await ctx.apply({ type: "Out", namespace: "ns", id: r.metadata.id }, { value: r.spec.value });
    }
  },
});

/** Registers the conformance tests for the runtimes `make` builds. */
export function runtimeConformance(name: string, make: RuntimeFactory): void {
  const title = (what: string) => `runtime conformance (${name}): ${what}`;

  Deno.test(title("a controller reads and writes only what it declares"), async () => {
    const store = new Store<RuntimeCatalog>();
    const runtime = make(store, {});
    const errors: unknown[] = [];
    const attempt = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        errors.push(e);
      }
    };
    runtime.register({
      name: "conformance.Nosy",
      inputs: [{ type: "In", kind: "weak" }],
      outputs: [{ type: "Out", kind: "exclusive" }],
      async reconcile(ctx) {
        await attempt(() => ctx.list("Other"));
        await attempt(() => ctx.apply({ type: "Other", namespace: "ns", id: "x" }, { value: 1 }));
        await ctx.apply({ type: "Out", namespace: "ns", id: "done" }, { value: 1 });
      },
    });
    runtime.start();
    await waitForResource(store, "Out", () => true);
    await runtime.stop();
    assert.equal(errors.length, 2);
    assert.ok(errors.every((e) => e instanceof AccessError));
    assert.deepEqual(store.list("Other"), []);
  });

  Deno.test(title("an input change triggers a reconcile; outputs follow"), async () => {
    const store = new Store<RuntimeCatalog>();
    const runtime = make(store, {});
    let cycles = 0;
    runtime.register(copier(() => cycles++));
    runtime.start();
    store.create({ type: "In", namespace: "ns", id: "a", spec: { value: 1 }, owner: "user" });
    await waitForResource(store, "Out", (r) => r.spec.value === 1);
    const before = cycles;
    await store.modify({ type: "In", namespace: "ns", id: "a" }, "user", () => ({ value: 7 }));
    const out = await waitForResource(store, "Out", (r) => r.spec.value === 7);
    assert.ok(cycles > before);
    assert.equal(out.metadata.owner, "conformance.Copier");
    await runtime.stop();
  });

  Deno.test(title("a failing reconcile backs off, growing to the cap"), async () => {
    const clock = new FakeClock();
    const rec = statsRecorder();
    const store = new Store<RuntimeCatalog>({ clock });
    const runtime = make(store, {
      clock,
      backoff: { initialMs: 100, maxMs: 400, factor: 2 },
      onStats: rec.onStats,
    });
    runtime.register({ ...copier(), reconcile: () => Promise.reject(new Error("boom")) });
    runtime.start();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      await clock.waitForSleepers(1);
      const [d] = clock.pendingDelays();
      delays.push(d);
      const next = rec.next((s) => s.state === "backoff");
      await clock.advance(d);
      await next;
    }
    assert.deepEqual(delays, [100, 200, 400, 400]);
    assert.equal(runtime.stats()[0].lastError, "boom");
    await runtime.stop();
  });
}
