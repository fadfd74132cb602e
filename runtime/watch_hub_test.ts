import assert from "node:assert/strict";
import fc from "fast-check";
import { Store } from "./store.ts";
import type { Watch, WatchEvent } from "./watch.ts";
import { WatchHub } from "./watch_hub.ts";

type Cat = { Item: { n: number }; Other: { n: number } };
const ptr = (id: string, namespace = "ns") => ({ type: "Item" as const, namespace, id });

/** An event as comparable data. */
function show(e: WatchEvent): string {
  switch (e.kind) {
    case "bootstrapped":
      return "bootstrapped";
    case "overflow":
      return `overflow:${e.dropped}`;
    default:
      return `${e.kind}:${e.resource.metadata.namespace}/${e.resource.metadata.id}@${e.resource.metadata.version}`;
  }
}

async function take(w: Watch, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await w.next();
    if (r.done) break;
    out.push(show(r.value));
  }
  return out;
}

const BLOCKED = Symbol("blocked");

/** Reads one event if one is ready now, keeping a pending read for later. */
function reader(w: Watch) {
  let outstanding: Promise<IteratorResult<WatchEvent>> | undefined;
  return async (): Promise<string> => {
    outstanding ??= w.next();
    const r = await Promise.race([outstanding, Promise.resolve(BLOCKED)]);
    if (r === BLOCKED) return "blocked";
    outstanding = undefined;
    return r.done ? "done" : show(r.value);
  };
}

Deno.test("one store subscription for every watch of a type; the last to leave closes it", async () => {
  const s = new Store<Cat>();
  const hub = new WatchHub(s);
  const ws = Array.from({ length: 100 }, () => hub.watch("Item"));
  assert.equal(s.watchCount, 1);
  assert.equal(hub.subscriptions, 1);
  assert.equal(hub.watches, 100);
  const other = hub.watch("Item", { namespace: "elsewhere" });
  assert.equal(s.watchCount, 2, "another namespace is another subscription");
  s.create({ ...ptr("a"), spec: { n: 1 }, owner: "o" });
  for (const w of ws) assert.deepEqual(await take(w, 2), ["bootstrapped", "created:ns/a@1"]);
  for (const w of ws.slice(1)) w.close();
  assert.equal(s.watchCount, 2);
  ws[0].close();
  other.close();
  assert.equal(s.watchCount, 0);
  assert.equal(hub.subscriptions, 0);
  assert.equal(hub.retained, 0);
});

Deno.test("each watch reads in commit order, from its own bootstrap", async () => {
  const s = new Store<Cat>();
  const hub = new WatchHub(s);
  s.create({ ...ptr("a"), spec: { n: 0 }, owner: "o" });
  const early = hub.watch("Item");
  s.modify(ptr("a"), "o", () => ({ n: 1 }));
  await Promise.resolve();
  const late = hub.watch("Item");
  s.create({ ...ptr("b"), spec: { n: 0 }, owner: "o" });
  assert.deepEqual(await take(early, 4), [
    "created:ns/a@1",
    "bootstrapped",
    "updated:ns/a@2",
    "created:ns/b@1",
  ]);
  assert.deepEqual(await take(late, 3), ["created:ns/a@2", "bootstrapped", "created:ns/b@1"]);
  early.close();
  late.close();
});

Deno.test("a slow watch overflows alone; the fast ones see every event; the log stays bounded", async () => {
  const s = new Store<Cat>();
  const hub = new WatchHub(s);
  const slow = hub.watch("Item", { capacity: 8 });
  const fast = [hub.watch("Item", { capacity: 8 }), hub.watch("Item", { capacity: 8 })];
  const seen: string[][] = [[], []];
  for (let i = 0; i < 100; i++) {
    s.create({ ...ptr(`r${i}`), spec: { n: i }, owner: "o" });
    for (const [j, w] of fast.entries()) seen[j].push(...await take(w, i === 0 ? 2 : 1));
    assert.ok(hub.retained <= 8 + 1, `retained ${hub.retained}`);
  }
  const all = Array.from({ length: 100 }, (_, i) => `created:ns/r${i}@1`);
  for (const got of seen) assert.deepEqual(got, ["bootstrapped", ...all]);
  const slowFirst = await take(slow, 2);
  assert.deepEqual(slowFirst, ["overflow:100", "created:ns/r0@1"], "told, then re-bootstrapped");
  assert.equal((await take(slow, 100)).at(-1), "bootstrapped");
  s.create({ ...ptr("late"), spec: { n: 0 }, owner: "o" });
  assert.deepEqual(await take(slow, 1), ["created:ns/late@1"]);
  for (const w of [slow, ...fast]) w.close();
});

Deno.test("closing a watch lets go of what only it held", () => {
  const s = new Store<Cat>();
  const hub = new WatchHub(s);
  const slow = hub.watch("Item", { capacity: 1000 });
  const idle = hub.watch("Item", { capacity: 1000 });
  for (let i = 0; i < 600; i++) s.create({ ...ptr(`r${i}`), spec: { n: i }, owner: "o" });
  assert.equal(hub.retained, 600);
  assert.equal(slow.pending, 600);
  slow.close();
  assert.equal(hub.retained, 600, "the other watch still holds them");
  assert.equal(hub.watches, 1);
  idle.close();
  assert.equal(hub.retained, 0);
  assert.equal(s.watchCount, 0);
});

Deno.test("the close policy ends the watch after the overflow event; aborting closes a waiting one", async () => {
  const s = new Store<Cat>();
  const hub = new WatchHub(s);
  const w = hub.watch("Item", { capacity: 2, onOverflow: "close" });
  assert.deepEqual(await take(w, 1), ["bootstrapped"]);
  for (let i = 0; i < 5; i++) s.create({ ...ptr(`r${i}`), spec: { n: i }, owner: "o" });
  assert.deepEqual(await take(w, 10), ["overflow:5"]);
  assert.equal(s.watchCount, 0);
  const abort = new AbortController();
  const v = hub.watch("Item", { signal: abort.signal });
  await take(v, 6);
  const pending = v.next();
  abort.abort();
  assert.equal((await pending).done, true);
  assert.equal(hub.subscriptions, 0);
});

type Step =
  | { op: "write"; id: string; namespace: string }
  | { op: "destroy"; id: string; namespace: string }
  | { op: "read"; who: number }
  | { op: "open"; who: number }
  | { op: "close"; who: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("write" as const),
      id: fc.constantFrom("a", "b", "c"),
      namespace: fc.constantFrom("ns", "other"),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("destroy" as const),
      id: fc.constantFrom("a", "b", "c"),
      namespace: fc.constantFrom("ns", "other"),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant("read" as const), who: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("open" as const), who: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("close" as const), who: fc.nat(3) }) },
);

/** Consumer i watches with capacity 1 + i, namespace "ns" for odd i, all for even i. */
function optionsOf(who: number) {
  return { capacity: 1 + who, namespace: who % 2 === 1 ? "ns" : undefined };
}

Deno.test("property: every shared watch sees exactly what its own store watch would", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { maxLength: 80 }), async (steps) => {
      const s = new Store<Cat>();
      const hub = new WatchHub(s);
      type Pair = {
        own: Watch;
        shared: Watch;
        readOwn: () => Promise<string>;
        readShared: () => Promise<string>;
      };
      const open = (who: number): Pair => {
        const own = s.watch("Item", optionsOf(who));
        const shared = hub.watch("Item", optionsOf(who));
        return { own, shared, readOwn: reader(own), readShared: reader(shared) };
      };
      const pairs = new Map<number, Pair>();
      let n = 0;
      for (const step of steps) {
        if (step.op === "write") {
          const p = ptr(step.id, step.namespace);
          const cur = s.find("Item", p.namespace, p.id);
          if (cur?.metadata.phase === "tearingDown") continue;
          await s.modify(p, "o", () => ({ n: n++ }));
        } else if (step.op === "destroy") {
          const p = ptr(step.id, step.namespace);
          if (!s.find("Item", p.namespace, p.id)) continue;
          s.teardown(p, "o");
          s.destroy(p, "o");
        } else if (step.op === "open") {
          if (!pairs.has(step.who)) pairs.set(step.who, open(step.who));
        } else if (step.op === "close") {
          pairs.get(step.who)?.own.close();
          pairs.get(step.who)?.shared.close();
          pairs.delete(step.who);
        } else {
          const p = pairs.get(step.who);
          if (!p) continue;
          assert.equal(await p.readShared(), await p.readOwn());
          assert.equal(p.shared.pending, p.own.pending);
        }
      }
      for (const p of pairs.values()) {
        p.own.close();
        p.shared.close();
      }
      assert.equal(s.watchCount, 0);
      assert.equal(hub.subscriptions, 0);
    }),
    { numRuns: 300 },
  );
});
