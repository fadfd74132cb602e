import assert from "node:assert/strict";
import {
  FinalizersPendingError,
  isConflict,
  isNotFound,
  isOwnerConflict,
  isPhaseConflict,
} from "./errors.ts";
import { parseLabelSelector } from "./resource.ts";
import { Store } from "./store.ts";
import type { WatchEvent } from "./watch.ts";

type Cat = { Item: { n: number; tags?: string[] }; Other: { s: string } };
const ptr = (id: string) => ({ type: "Item" as const, namespace: "ns", id });

function newStore() {
  return new Store<Cat>();
}

async function take<T>(it: AsyncIterator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push((await it.next()).value);
  return out;
}

Deno.test("create, get, list with namespace and label selectors", () => {
  const s = newStore();
  s.create({ ...ptr("b"), spec: { n: 2 }, owner: "o", labels: { tier: "x" } });
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o", labels: { tier: "y", extra: "1" } });
  s.create({ type: "Item", namespace: "other", id: "c", spec: { n: 3 }, owner: "o" });
  assert.equal(s.get("Item", "ns", "a").spec.n, 1);
  assert.deepEqual(
    s.list("Item").map((r) => r.metadata.id),
    ["a", "b", "c"].sort((x, y) => x === "c" ? 1 : y === "c" ? -1 : x.localeCompare(y)),
  );
  assert.deepEqual(s.list("Item", { namespace: "ns" }).map((r) => r.metadata.id), ["a", "b"]);
  assert.deepEqual(
    s.list("Item", { labels: parseLabelSelector("tier=x") }).map((r) => r.metadata.id),
    ["b"],
  );
  assert.deepEqual(
    s.list("Item", { labels: parseLabelSelector("tier in (x|y),!extra") }).map((r) =>
      r.metadata.id
    ),
    ["b"],
  );
  assert.throws(() => s.get("Item", "ns", "zzz"), isNotFound);
  assert.throws(() => s.create({ ...ptr("a"), spec: { n: 9 }, owner: "o" }), /already exists/);
});

Deno.test("list orders by namespace, then id, each by code unit (not the locale's collation)", () => {
  const s = newStore();
  for (const [namespace, id] of [["alpha", "b"], ["Zeta", "a"], ["alpha", "B"], ["alpha", "a-1"]]) {
    s.create({ type: "Item", namespace, id, spec: { n: 0 }, owner: "o" });
  }
  assert.deepEqual(
    s.list("Item").map((r) => `${r.metadata.namespace}/${r.metadata.id}`),
    ["Zeta/a", "alpha/B", "alpha/a-1", "alpha/b"],
  );
});

Deno.test("resources are frozen: callers cannot mutate the store", () => {
  const s = newStore();
  const spec = { n: 1, tags: ["a"] };
  const r = s.create({ ...ptr("a"), spec, owner: "o" });
  spec.tags.push("mutated-after-create");
  assert.deepEqual(s.get("Item", "ns", "a").spec.tags, ["a"]);
  assert.throws(() => (r.spec.tags as string[]).push("x"), TypeError);
});

Deno.test("update is compare-and-swap; a stale version fails with Conflict and loses nothing", () => {
  const s = newStore();
  const v1 = s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o" });
  const v2 = s.update({ ...ptr("a"), version: 1, spec: { n: 2 }, owner: "o" });
  assert.equal(v2.metadata.version, 2);
  assert.ok(v2.metadata.updated >= v1.metadata.created);
  const err = (() => {
    try {
      s.update({ ...ptr("a"), version: 1, spec: { n: 99 }, owner: "o" });
    } catch (e) {
      return e;
    }
  })();
  assert.ok(isConflict(err));
  assert.equal(err.expected, 1);
  assert.equal(err.actual, 2);
  assert.equal(s.get("Item", "ns", "a").spec.n, 2);
});

Deno.test("an update that changes nothing keeps the version and emits nothing", async () => {
  const s = newStore();
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o" });
  const w = s.watch("Item");
  await take(w, 2);
  const same = s.update({ ...ptr("a"), version: 1, spec: { n: 1 }, owner: "o" });
  assert.equal(same.metadata.version, 1);
  assert.equal(w.pending, 0);
  w.close();
});

Deno.test("only the owner may update, tear down or destroy", () => {
  const s = newStore();
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "alice" });
  assert.throws(
    () => s.update({ ...ptr("a"), version: 1, spec: { n: 2 }, owner: "bob" }),
    isOwnerConflict,
  );
  assert.throws(() => s.teardown(ptr("a"), "bob"), isOwnerConflict);
  assert.throws(() => s.destroy(ptr("a"), "bob"), isOwnerConflict);
});

Deno.test("modify retries on conflict and never loses an update", async () => {
  const s = newStore();
  s.create({ ...ptr("a"), spec: { n: 0 }, owner: "o" });
  await Promise.all(
    Array.from({ length: 50 }, () =>
      s.modify(ptr("a"), "o", async (cur) => {
        await Promise.resolve();
        return { n: cur!.n + 1 };
      }, { maxRetries: 1000 })),
  );
  assert.equal(s.get("Item", "ns", "a").spec.n, 50);
});

Deno.test("modify creates when missing unless told not to", async () => {
  const s = newStore();
  const r = await s.modify(ptr("x"), "o", (cur) => ({ n: (cur?.n ?? 10) + 1 }));
  assert.equal(r.spec.n, 11);
  await assert.rejects(
    () => s.modify(ptr("y"), "o", () => ({ n: 1 }), { create: false }),
    isNotFound,
  );
});

Deno.test("teardown, finalizers and destroy", () => {
  const s = newStore();
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o" });
  s.addFinalizer(ptr("a"), "consumer");
  s.addFinalizer(ptr("a"), "consumer");
  assert.deepEqual(s.get("Item", "ns", "a").metadata.finalizers, ["consumer"]);
  assert.equal(s.teardown(ptr("a"), "o"), false);
  assert.equal(s.get("Item", "ns", "a").metadata.phase, "tearingDown");
  assert.throws(() => s.destroy(ptr("a"), "o"), FinalizersPendingError);
  assert.throws(() => s.addFinalizer(ptr("a"), "late"), isPhaseConflict);
  assert.throws(
    () => s.update({ ...ptr("a"), version: 3, spec: { n: 2 }, owner: "o" }),
    isPhaseConflict,
  );
  s.removeFinalizer(ptr("a"), "consumer");
  assert.equal(s.teardown(ptr("a"), "o"), true);
  s.destroy(ptr("a"), "o");
  assert.equal(s.find("Item", "ns", "a"), undefined);
});

Deno.test("watch: contents, bootstrapped, then events in commit order", async () => {
  const s = newStore();
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o" });
  const w = s.watch("Item");
  s.update({ ...ptr("a"), version: 1, spec: { n: 2 }, owner: "o" });
  s.create({ ...ptr("b"), spec: { n: 3 }, owner: "o" });
  s.destroy(ptr("b"), "o");
  s.create({ type: "Other", namespace: "ns", id: "z", spec: { s: "" }, owner: "o" });
  const events = await take(w, 5);
  assert.deepEqual(events.map((e) => e.kind), [
    "created",
    "bootstrapped",
    "updated",
    "created",
    "destroyed",
  ]);
  const upd = events[2] as Extract<WatchEvent, { kind: "updated" }>;
  assert.equal((upd.old.spec as { n: number }).n, 1);
  assert.equal((upd.resource.spec as { n: number }).n, 2);
  w.close();
  assert.equal(s.watchCount, 0);
  assert.deepEqual(await w.next(), { value: undefined, done: true });
});

Deno.test("watch filtered by id sees only that resource", async () => {
  const s = newStore();
  const w = s.watch("Item", { namespace: "ns", id: "a" });
  s.create({ ...ptr("b"), spec: { n: 1 }, owner: "o" });
  s.create({ ...ptr("a"), spec: { n: 2 }, owner: "o" });
  const events = await take(w, 2);
  assert.deepEqual(events.map((e) => e.kind), ["bootstrapped", "created"]);
  assert.equal((events[1] as { resource: { metadata: { id: string } } }).resource.metadata.id, "a");
  w.close();
});

Deno.test("a slow watcher overflows explicitly and is re-bootstrapped; writers never wait", async () => {
  const s = newStore();
  const slow = s.watch("Item", { capacity: 4 });
  const fast = s.watch("Item", { capacity: 1000 });
  for (let i = 0; i < 10; i++) s.create({ ...ptr(`r${i}`), spec: { n: i }, owner: "o" });
  const kinds = (await take(slow, 12)).map((e) => e.kind);
  assert.equal(kinds[0], "overflow");
  assert.deepEqual(kinds.slice(1), [...Array(10).fill("created"), "bootstrapped"]);
  s.create({ ...ptr("late"), spec: { n: 99 }, owner: "o" });
  assert.equal((await slow.next()).value.kind, "created");
  const fastKinds = (await take(fast, 11)).map((e) => e.kind);
  assert.deepEqual(fastKinds, ["bootstrapped", ...Array(10).fill("created")]);
  slow.close();
  fast.close();
});

Deno.test("overflow with the close policy ends the watch after the overflow event", async () => {
  const s = newStore();
  const w = s.watch("Item", { capacity: 2, onOverflow: "close" });
  assert.equal((await w.next()).value.kind, "bootstrapped");
  for (let i = 0; i < 5; i++) s.create({ ...ptr(`r${i}`), spec: { n: i }, owner: "o" });
  const ev = (await w.next()).value as Extract<WatchEvent, { kind: "overflow" }>;
  assert.equal(ev.kind, "overflow");
  assert.equal(ev.dropped, 5);
  assert.equal((await w.next()).done, true);
  assert.equal(s.watchCount, 0);
});

Deno.test("aborting the signal closes a waiting watch", async () => {
  const s = newStore();
  const abort = new AbortController();
  const w = s.watch("Item", { signal: abort.signal });
  await w.next();
  const pending = w.next();
  abort.abort();
  assert.equal((await pending).done, true);
});
