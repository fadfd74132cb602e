import assert from "node:assert/strict";
import { UnlockBudget } from "./unlock_budget.ts";

Deno.test("UnlockBudget: per client, per node, one at a time, and the window slides", () => {
  let now = 0;
  const b = new UnlockBudget({ now: () => now, perClient: 2, perNode: 3, windowMs: 1000 });
  const take = (c: string) => {
    const a = b.admit(c);
    if (a.ok) a.release();
    return a.ok ? "ok" : a.reason;
  };
  assert.equal(take("a"), "ok");
  const held = b.admit("a");
  assert.ok(held.ok);
  assert.match(take("b"), /in progress/);
  held.release();
  held.release(); // idempotent
  assert.match(take("a"), /2 UnlockVolume tries per client/);
  assert.equal(take("b"), "ok");
  const r = b.admit("c");
  assert.ok(!r.ok && /3 UnlockVolume tries per node/.test(r.reason) && r.retryAfterMs === 1000);
  now = 1001;
  assert.equal(take("a"), "ok");
});
