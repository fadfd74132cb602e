import assert from "node:assert/strict";
import { caSectionFor, mayRun, type NodeStand, standOf } from "./plan.ts";

const cas = { oldCrt: "OLD\n", newCrt: "NEW\n" };

Deno.test("standOf: each observed state needs the next step, whitespace aside", () => {
  assert.deepEqual(standOf({ crt: "OLD", accepted: [] }, cas), { next: "accept" });
  assert.deepEqual(standOf({ crt: "OLD", accepted: ["X", "NEW"] }, cas), { next: "switch" });
  assert.deepEqual(standOf({ crt: "NEW\n", accepted: ["OLD"] }, cas), { next: "finish" });
  assert.deepEqual(standOf({ crt: "NEW", accepted: [] }, cas), { next: "done" });
  assert.deepEqual(standOf({ crt: "NEW", accepted: ["X"] }, cas), { next: "done" });
});

Deno.test("standOf: a node with another CA, or none, is foreign and says why", () => {
  const other = standOf({ crt: "OTHER", accepted: ["OLD"] }, cas);
  assert.equal(other.next, "foreign");
  assert.match((other as { reason: string }).reason, /neither/);
  const none = standOf({ crt: undefined, accepted: [] }, cas);
  assert.match((none as { reason: string }).reason, /no machine.ca/);
});

Deno.test("caSectionFor: each step's machine.ca, other accepted CAs kept once, in order", () => {
  const observed = { crt: "OLD", accepted: ["X", "NEW"] };
  const keys = { ...cas, oldKey: "OK", newKey: "NK" };
  assert.deepEqual(caSectionFor("accept", observed, keys), {
    crt: "OLD\n",
    key: "OK",
    accepted: ["X", "NEW\n"],
  });
  assert.deepEqual(caSectionFor("switch", observed, keys), {
    crt: "NEW\n",
    key: "NK",
    accepted: ["X", "OLD\n"],
  });
  assert.deepEqual(caSectionFor("finish", { crt: "NEW", accepted: ["OLD", "X"] }, keys), {
    crt: "NEW\n",
    key: "NK",
    accepted: ["X"],
  });
});

Deno.test("mayRun: switch waits for every accept, finish for every switch; foreign stops all", () => {
  const s = (next: NodeStand["next"]): NodeStand =>
    next === "foreign" ? { next, reason: "r" } : { next } as NodeStand;
  assert.ok(mayRun("accept", [s("accept"), s("switch"), s("done")]));
  assert.ok(!mayRun("switch", [s("switch"), s("accept")]));
  assert.ok(mayRun("switch", [s("switch"), s("finish")]));
  assert.ok(!mayRun("finish", [s("finish"), s("switch")]));
  assert.ok(mayRun("finish", [s("finish"), s("done")]));
  assert.ok(!mayRun("accept", [s("accept"), s("foreign")]));
});
