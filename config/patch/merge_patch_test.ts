import { deepEqual } from "node:assert/strict";
import { applyMergePatch, mergePatchOf } from "./merge_patch.ts";
import type { JsonValue } from "./json_value.ts";

Deno.test("RFC 7386 appendix A, every example", () => {
  const cases: [JsonValue, JsonValue, JsonValue][] = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [["a", "b"], ["c", "d"], ["c", "d"]],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of cases) {
    const before = structuredClone(target);
    deepEqual(applyMergePatch(target, patch), want, JSON.stringify([target, patch]));
    deepEqual(target, before, "the target is not changed");
  }
});

Deno.test("mergePatchOf names removed members null and leaves equal ones out", () => {
  deepEqual(mergePatchOf({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2, d: 4 }, e: [1] }), {
    a: null,
    b: { d: 4 },
    e: [1],
  });
});

Deno.test("a __proto__ member is an ordinary member, never a prototype", () => {
  const patch = JSON.parse('{"__proto__": {"polluted": 1}}');
  const out = applyMergePatch({}, patch) as Record<string, unknown>;
  deepEqual(Object.getPrototypeOf(out), Object.prototype);
  deepEqual(Object.keys(out), ["__proto__"]);
  deepEqual(({} as Record<string, unknown>).polluted, undefined);
});
