/**
 * Property-based tests of the store's invariants under random operation
 * sequences and interleavings (fast-check).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { isConflict, isFinalizersPending } from "./errors.ts";
import { Store } from "./store.ts";
import type { WatchEvent } from "./watch.ts";

type Cat = { Item: { n: number } };
const ids = ["a", "b", "c"];
const p = (id: string) => ({ type: "Item" as const, namespace: "ns", id });

type Op =
  | { op: "create"; id: string; n: number }
  | { op: "update"; id: string; n: number; stale: boolean }
  | { op: "teardown"; id: string }
  | { op: "destroy"; id: string }
  | { op: "addFin"; id: string; f: string }
  | { op: "rmFin"; id: string; f: string };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("create" as const), id: fc.constantFrom(...ids), n: fc.integer() }),
  fc.record({
    op: fc.constant("update" as const),
    id: fc.constantFrom(...ids),
    n: fc.integer(),
    stale: fc.boolean(),
  }),
  fc.record({ op: fc.constant("teardown" as const), id: fc.constantFrom(...ids) }),
  fc.record({ op: fc.constant("destroy" as const), id: fc.constantFrom(...ids) }),
  fc.record({
    op: fc.constant("addFin" as const),
    id: fc.constantFrom(...ids),
    f: fc.constantFrom("x", "y"),
  }),
  fc.record({
    op: fc.constant("rmFin" as const),
    id: fc.constantFrom(...ids),
    f: fc.constantFrom("x", "y"),
  }),
);

function apply(s: Store<Cat>, o: Op): void {
  try {
    const cur = s.find("Item", "ns", o.id);
    switch (o.op) {
      case "create":
        s.create({ ...p(o.id), spec: { n: o.n }, owner: "o" });
        break;
      case "update":
        if (cur) {
          const v = o.stale ? cur.metadata.version - 1 : cur.metadata.version;
          s.update({ ...p(o.id), version: v, spec: { n: o.n }, owner: "o" });
        }
        break;
      case "teardown":
        s.teardown(p(o.id), "o");
        break;
      case "destroy":
        s.destroy(p(o.id), "o");
        break;
      case "addFin":
        s.addFinalizer(p(o.id), o.f);
        break;
      case "rmFin":
        s.removeFinalizer(p(o.id), o.f);
        break;
    }
  } catch (e) {
    if (
      !(e instanceof Error) ||
      !/Store|NotFound|AlreadyExists|Conflict|Phase|Finalizers/.test(e.name)
    ) {
      throw e;
    }
  }
}

Deno.test("property: versions grow by one per change; finalizers always block destroy", () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
      const s = new Store<Cat>();
      for (const o of ops) {
        const before = s.find("Item", "ns", o.id);
        if (o.op === "destroy" && before && before.metadata.finalizers.length > 0) {
          assert.throws(() => s.destroy(p(o.id), "o"), isFinalizersPending);
          assert.ok(s.find("Item", "ns", o.id));
          continue;
        }
        apply(s, o);
        const after = s.find("Item", "ns", o.id);
        if (before && after && after !== before) {
          assert.equal(after.metadata.version, before.metadata.version + 1);
        }
        if (o.op === "update" && o.stale && before) {
          assert.equal(after, before, "a stale update changes nothing");
        }
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("property: watchers see every committed change in order, or an explicit overflow", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { maxLength: 60 }),
      fc.integer({ min: 1, max: 20 }),
      async (ops, capacity) => {
        const s = new Store<Cat>();
        const committed: WatchEvent[] = [];
        const stop = s.onCommit((e) => committed.push(e));
        const w = s.watch("Item", { capacity });
        const seen: WatchEvent[] = [];
        let overflowed = false;
        for (const o of ops) apply(s, o);
        stop();
        // Drain: bootstrap marker, then live events (or an overflow and a re-bootstrap).
        for (;;) {
          const next = await Promise.race([
            w.next(),
            new Promise<null>((r) => queueMicrotask(() => queueMicrotask(() => r(null)))),
          ]);
          if (next === null || next.done) break;
          if (next.value.kind === "overflow") overflowed = true;
          seen.push(next.value);
        }
        w.close();
        if (!overflowed) {
          const live = seen.slice(1);
          assert.equal(seen[0].kind, "bootstrapped");
          assert.deepEqual(
            live.map((e) => [e.kind, "resource" in e ? e.resource.metadata.version : 0]),
            committed.map((e) => [e.kind, "resource" in e ? e.resource.metadata.version : 0]),
          );
        } else {
          assert.ok(committed.length > capacity, "overflow only when the queue really overflowed");
          const after = seen.slice(seen.findIndex((e) => e.kind === "overflow") + 1);
          const bootIds = after.filter((e) => e.kind === "created").map((e) =>
            "resource" in e ? e.resource.metadata.id : ""
          );
          assert.deepEqual(bootIds, s.list("Item").map((r) => r.metadata.id));
          assert.equal(after.at(-1)?.kind, "bootstrapped");
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("property: concurrent modify never loses an increment under random interleavings", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 30 }),
      async (yields) => {
        const s = new Store<Cat>();
        s.create({ ...p("a"), spec: { n: 0 }, owner: "o" });
        let conflicts = 0;
        await Promise.all(yields.map(async (k) => {
          await s.modify(p("a"), "o", async (cur) => {
            for (let i = 0; i < k; i++) await Promise.resolve();
            return { n: cur!.n + 1 };
          }, { maxRetries: 10_000 }).catch((e) => {
            if (isConflict(e)) conflicts++;
            throw e;
          });
        }));
        assert.equal(conflicts, 0);
        const r = s.get("Item", "ns", "a");
        assert.equal(r.spec.n, yields.length);
        assert.equal(r.metadata.version, yields.length + 1);
      },
    ),
    { numRuns: 200 },
  );
});
