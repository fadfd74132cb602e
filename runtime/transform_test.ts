import assert from "node:assert/strict";
import { ControllerRuntime } from "./runtime.ts";
import { Store } from "./store.ts";
import { waitForAbsence, waitForResource } from "./testing.ts";
import { transformController } from "./transform.ts";

type Cat = { Spec: { value: number }; Status: { doubled: number } };

/** Doubles every Spec into a Status with the same id; odd values map to nothing. */
const doubler = transformController<Cat, "Spec", "Status">({
  name: "test.Doubler",
  input: "Spec",
  output: "Status",
  map: (r) => r.spec.value % 2 === 0 ? { spec: { doubled: r.spec.value * 2 } } : undefined,
});

function setup() {
  const store = new Store<Cat>();
  const runtime = new ControllerRuntime(store);
  runtime.register(doubler);
  runtime.start();
  return { store, runtime };
}

const spec = (id: string) => ({ type: "Spec" as const, namespace: "ns", id });

Deno.test("transform: declares one weak input and one exclusive output", () => {
  assert.deepEqual(doubler.inputs, [{ type: "Spec", kind: "weak" }]);
  assert.deepEqual(doubler.outputs, [{ type: "Status", kind: "exclusive" }]);
});

Deno.test("transform: one output per input, following its changes", async () => {
  const { store, runtime } = setup();
  store.create({ ...spec("a"), spec: { value: 2 }, owner: "user" });
  const st = await waitForResource(store, "Status", (r) => r.spec.doubled === 4);
  assert.equal(st.metadata.id, "a");
  assert.equal(st.metadata.namespace, "ns");
  assert.equal(st.metadata.owner, "test.Doubler");
  await store.modify(spec("a"), "user", () => ({ value: 10 }));
  await waitForResource(store, "Status", (r) => r.spec.doubled === 20);
  await runtime.stop();
});

Deno.test("transform: an output goes when its input goes or maps to nothing", async () => {
  const { store, runtime } = setup();
  store.create({ ...spec("a"), spec: { value: 2 }, owner: "user" });
  store.create({ ...spec("b"), spec: { value: 4 }, owner: "user" });
  await waitForResource(store, "Status", (r) => r.metadata.id === "b");
  store.destroy(spec("a"), "user");
  await waitForAbsence(store, "Status", (r) => r.metadata.id === "a");
  await store.modify(spec("b"), "user", () => ({ value: 5 })); // odd: no output
  await waitForAbsence(store, "Status", (r) => r.metadata.id === "b");
  await runtime.stop();
});

Deno.test("transform: a torn-down output waits for its finalizers, then comes back", async () => {
  const { store, runtime } = setup();
  store.create({ ...spec("a"), spec: { value: 2 }, owner: "user" });
  await waitForResource(store, "Status", (r) => r.metadata.id === "a");
  const status = { type: "Status" as const, namespace: "ns", id: "a" };
  store.addFinalizer(status, "holder");
  await store.modify(spec("a"), "user", () => ({ value: 3 })); // maps to nothing: torn down
  await waitForResource(store, "Status", (r) => r.metadata.phase === "tearingDown");
  await store.modify(spec("a"), "user", () => ({ value: 6 })); // wanted again, finalizer held
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(store.get("Status", "ns", "a").metadata.phase, "tearingDown");
  store.removeFinalizer(status, "holder");
  await waitForResource(
    store,
    "Status",
    (r) => r.metadata.phase === "running" && r.spec.doubled === 12,
  );
  await runtime.stop();
});
