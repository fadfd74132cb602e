import { deepEqual, equal, match, throws } from "node:assert/strict";
import { parsePatch, parsePatches } from "./patch_text.ts";
import { MAX_PATCH_BYTES, MAX_PATCH_DEPTH, MAX_PATCH_OPS } from "./limits.ts";
import { PatchError } from "./patch_error.ts";
import { applyPatches } from "./apply_patches.ts";

function refusal(f: () => unknown): PatchError {
  try {
    f();
  } catch (e) {
    if (e instanceof PatchError) return e;
    throw e;
  }
  throw new Error("expected a PatchError");
}

Deno.test("JSON or YAML, the kind inferred from the shape or given", () => {
  const json = parsePatch({ text: '[{"op":"remove","path":"/a"}]' });
  deepEqual(json, { type: "json", ops: [{ op: "remove", path: "/a" }] });
  const yaml = parsePatch({ text: "- op: add\n  path: /a\n  value: {b: 1}\n" });
  deepEqual(yaml, { type: "json", ops: [{ op: "add", path: "/a", value: { b: 1 } }] });
  deepEqual(parsePatch({ text: "machine:\n  hostname: b\n  sysctls: null\n" }), {
    type: "merge",
    value: { machine: { hostname: "b", sysctls: null } },
  });
  // A merge patch that is a list replaces the document; only `type` says so.
  deepEqual(parsePatch({ text: "[1]", type: "merge" }), { type: "merge", value: [1] });
  equal(refusal(() => parsePatch({ text: "{}", type: "json" })).kind, "shape");
});

Deno.test("malformed patches are refused with the patch, operation and line", () => {
  let e = refusal(() => parsePatches([{ text: "[]" }, { text: "a: [1,\n" }]));
  deepEqual([e.kind, e.at.patch], ["syntax", 1]);
  match(e.message, /^patch 1, line \d+: /);
  e = refusal(() => parsePatches([{ text: '[{"op":"add","path":"/a"}]' }]));
  deepEqual([e.kind, e.at.patch, e.at.op], ["shape", 0, 0]);
  equal(e.message, "patch 0, operation 0 (add): add needs a value");
  e = refusal(() => parsePatch({ text: '[{"op":"frob","path":"/a"}]' }));
  match(e.message, /op must be one of add, remove, replace, move, copy, test/);
  e = refusal(() => parsePatch({ text: '[{"op":"move","path":"/a"}]' }));
  match(e.message, /move needs from/);
  e = refusal(() => parsePatch({ text: "a: &x 1\nb: *x\n" }));
  match(e.message, /line 2: aliases are not accepted/);
  e = refusal(() => parsePatch({ text: "a: .nan\n" }));
  equal(e.kind, "shape");
  e = refusal(() => parsePatch({ text: "a: 1\na: 2\n" }));
  equal(e.kind, "syntax");
  e = refusal(() => parsePatch({ text: "a: 1\n---\nb: 2\n" }));
  equal(e.kind, "syntax");
  e = refusal(() => parsePatch({ text: "" }));
  equal(e.kind, "shape");
});

const replace = (i: number) => ({ op: "replace", path: "/a", value: i });

Deno.test("bounds: operations, bytes and depth, each at its limit and one past", () => {
  const ops = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => replace(i)));
  deepEqual(applyPatches({ a: 0 }, parsePatches([{ text: ops(MAX_PATCH_OPS) }])), { a: 999 });
  let e = refusal(() => parsePatches([{ text: ops(MAX_PATCH_OPS + 1) }]));
  deepEqual([e.kind, e.message], [
    "limit",
    "patch 0: the patch has 1001 operations; at most 1000 are accepted",
  ]);
  // Across patches of one request: a merge patch counts one.
  e = refusal(() => parsePatches([{ text: ops(MAX_PATCH_OPS) }, { text: "a: 1" }]));
  equal(e.message, "patch: the patches hold 1001 operations; at most 1000 are accepted");

  const sized = (n: number) => `a: "${"x".repeat(n - 7)}"\n`;
  equal(parsePatches([{ text: sized(MAX_PATCH_BYTES) }]).length, 1);
  e = refusal(() =>
    parsePatches([{ text: sized(MAX_PATCH_BYTES - 10) }, { text: "b: 123456789\n" }])
  );
  match(e.message, /the patches hold 262146 bytes; at most 262144 \(256 KiB\)/);

  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
  equal(parsePatch({ text: nested(MAX_PATCH_DEPTH), type: "merge" }).type, "merge");
  e = refusal(() => parsePatch({ text: nested(MAX_PATCH_DEPTH + 1) }));
  deepEqual([e.kind, e.at.line], ["limit", 1]);
  match(e.message, /nested more than 64 levels deep/);

  const deepPointer = (n: number) => "/a".repeat(n);
  const at = (n: number) => [{ op: "add" as const, path: deepPointer(n), value: 1 }];
  e = refusal(() => applyPatches({}, [{ type: "json", ops: at(MAX_PATCH_DEPTH) }]));
  equal(e.kind, "missing", "64 tokens are parsed (the parent is missing)");
  e = refusal(() => applyPatches({}, [{ type: "json", ops: at(MAX_PATCH_DEPTH + 1) }]));
  deepEqual([e.kind, e.at.patch, e.at.op], ["limit", 0, 0]);
  throws(() => parsePatch({ text: "{" }), PatchError);
});
