/**
 * The store's contract as a reusable suite, COSI-style: any implementation of
 * the resource store (the in-memory {@link Store} today, a persistent or remote
 * one later) must pass it. Run it from a `*_test.ts` with a factory.
 * @module
 */
import assert from "node:assert/strict";
import {
  AlreadyExistsError,
  ConflictError,
  FinalizersPendingError,
  NotFoundError,
  OwnerConflictError,
  PhaseConflictError,
} from "./errors.ts";
import type { Store } from "./store.ts";
import type { WatchEvent } from "./watch.ts";

/** The catalog the suite writes. */
export type ConformanceCatalog = { Item: { value: number }; Other: { value: number } };

/** What the suite needs of a store. */
export type ConformantStore = Pick<
  Store<ConformanceCatalog>,
  | "create"
  | "update"
  | "modify"
  | "get"
  | "find"
  | "list"
  | "teardown"
  | "destroy"
  | "addFinalizer"
  | "removeFinalizer"
  | "watch"
>;

const item = (id: string, namespace = "ns") => ({ type: "Item" as const, namespace, id });

/** One case of the suite, given a fresh, empty store. */
type Case = (s: ConformantStore) => void | Promise<void>;

/** The suite's cases by title. */
const CASES: Record<string, Case> = {
  "create starts at version 1; a taken pointer is AlreadyExists": (s) => {
    const r = s.create({ ...item("a"), spec: { value: 1 }, owner: "o" });
    assert.equal(r.metadata.version, 1);
    assert.equal(r.metadata.phase, "running");
    assert.deepEqual(s.get("Item", "ns", "a").spec, { value: 1 });
    assert.throws(
      () => s.create({ ...item("a"), spec: { value: 2 }, owner: "o" }),
      AlreadyExistsError,
    );
    assert.throws(() => s.get("Item", "ns", "missing"), NotFoundError);
    assert.equal(s.find("Item", "ns", "missing"), undefined);
  },

  "update is compare-and-swap on the version, by the owner only": (s) => {
    s.create({ ...item("a"), spec: { value: 1 }, owner: "o" });
    const r = s.update({ ...item("a"), version: 1, spec: { value: 2 }, owner: "o" });
    assert.equal(r.metadata.version, 2);
    assert.throws(
      () => s.update({ ...item("a"), version: 1, spec: { value: 3 }, owner: "o" }),
      ConflictError,
    );
    assert.throws(
      () => s.update({ ...item("a"), version: 2, spec: { value: 3 }, owner: "x" }),
      OwnerConflictError,
    );
    const same = s.update({ ...item("a"), version: 2, spec: { value: 2 }, owner: "o" });
    assert.equal(same.metadata.version, 2, "an update that changes nothing keeps the version");
  },

  "modify creates when missing and derives from the current spec": async (s) => {
    await s.modify(item("a"), "o", (cur) => ({ value: (cur?.value ?? 0) + 1 }));
    const r = await s.modify(item("a"), "o", (cur) => ({ value: (cur?.value ?? 0) + 1 }));
    assert.equal(r.spec.value, 2);
    await assert.rejects(
      s.modify(item("b"), "o", () => ({ value: 1 }), { create: false }),
      NotFoundError,
    );
  },

  "list filters by type and namespace, sorted by pointer": (s) => {
    for (const [ns, id] of [["ns", "b"], ["ns", "a"], ["other", "c"]]) {
      s.create({ ...item(id, ns), spec: { value: 0 }, owner: "o" });
    }
    s.create({ type: "Other", namespace: "ns", id: "z", spec: { value: 0 }, owner: "o" });
    assert.deepEqual(s.list("Item").map((r) => r.metadata.id), ["a", "b", "c"]);
    assert.deepEqual(s.list("Item", { namespace: "ns" }).map((r) => r.metadata.id), ["a", "b"]);
  },

  "finalizers hold a torn-down resource until removed": (s) => {
    s.create({ ...item("a"), spec: { value: 1 }, owner: "o" });
    s.addFinalizer(item("a"), "f");
    assert.equal(s.teardown(item("a"), "o"), false);
    assert.equal(s.get("Item", "ns", "a").metadata.phase, "tearingDown");
    assert.throws(() => s.addFinalizer(item("a"), "g"), PhaseConflictError);
    assert.throws(
      () => s.update({ ...item("a"), version: 3, spec: { value: 2 }, owner: "o" }),
      PhaseConflictError,
    );
    assert.throws(() => s.destroy(item("a"), "o"), FinalizersPendingError);
    s.removeFinalizer(item("a"), "f");
    assert.throws(() => s.destroy(item("a"), "x"), OwnerConflictError);
    s.destroy(item("a"), "o");
    assert.equal(s.find("Item", "ns", "a"), undefined);
  },

  "a watch bootstraps, then delivers live events in commit order": async (s) => {
    s.create({ ...item("a"), spec: { value: 1 }, owner: "o" });
    const watch = s.watch("Item");
    s.update({ ...item("a"), version: 1, spec: { value: 2 }, owner: "o" });
    s.create({ ...item("b"), spec: { value: 1 }, owner: "o" });
    s.destroy(item("a"), "o");
    const seen: string[] = [];
    for await (const e of watch) {
      seen.push(describe(e));
      if (seen.length === 5) break;
    }
    watch.close();
    assert.deepEqual(seen, [
      "created a 1",
      "bootstrapped",
      "updated a 2",
      "created b 1",
      "destroyed a",
    ]);
  },
};

/** Registers the conformance tests for the stores `make` returns (a fresh, empty one per test). */
export function storeConformance(name: string, make: () => ConformantStore): void {
  for (const [what, fn] of Object.entries(CASES)) {
    Deno.test(`store conformance (${name}): ${what}`, () => fn(make()));
  }
}

function describe(e: WatchEvent): string {
  if (e.kind === "bootstrapped") return e.kind;
  if (e.kind === "overflow") return `overflow ${e.dropped}`;
  const r = e.resource as unknown as { metadata: { id: string }; spec: { value: number } };
  return e.kind === "destroyed"
    ? `destroyed ${r.metadata.id}`
    : `${e.kind} ${r.metadata.id} ${r.spec.value}`;
}
