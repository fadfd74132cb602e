/** Properties of patches over arbitrary JSON documents (fast-check). */
import { deepEqual, ok } from "node:assert/strict";
import fc from "fast-check";
import { applyJsonPatch, type PatchOperation } from "./json_patch.ts";
import { jsonPatchOf } from "./json_patch_diff.ts";
import type { JsonValue } from "./json_value.ts";
import { applyMergePatch, mergePatchOf } from "./merge_patch.ts";
import { PatchError } from "./patch_error.ts";

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>;
/** JSON whose objects hold no null member: what a merge patch can reach exactly. */
const noNullMembers: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    ),
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("v"), { maxKeys: 4 }),
  ),
})).v.map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

Deno.test("property: a merge patch of mergePatchOf(a, b) applied to a gives b", () => {
  fc.assert(
    fc.property(noNullMembers, noNullMembers, (a, b) => {
      deepEqual(applyMergePatch(a, mergePatchOf(a, b)), b);
    }),
    { numRuns: 500 },
  );
});

Deno.test("property: the JSON Patch of jsonPatchOf(a, b) applied to a gives b", () => {
  fc.assert(
    fc.property(json, json, (a, b) => {
      deepEqual(applyJsonPatch(a, jsonPatchOf(a, b)), b);
      deepEqual(jsonPatchOf(a, a), []);
    }),
    { numRuns: 500 },
  );
});

const pointer = fc.array(
  fc.oneof(fc.constantFrom("0", "1", "-", "a", "b", "~"), fc.string({ maxLength: 3 })),
  {
    maxLength: 3,
  },
).map((t) => t.map((x) => "/" + x.replaceAll("~", "~0").replaceAll("/", "~1")).join(""));
const op: fc.Arbitrary<PatchOperation> = fc.oneof(
  fc.record({ op: fc.constantFrom("add", "replace", "test"), path: pointer, value: json }),
  fc.record({ op: fc.constant("remove"), path: pointer }),
  fc.record({ op: fc.constantFrom("move", "copy"), from: pointer, path: pointer }),
) as fc.Arbitrary<PatchOperation>;

Deno.test("property: any patch either applies or throws a PatchError, and never changes its input", () => {
  fc.assert(
    fc.property(json, fc.array(op, { maxLength: 6 }), (doc, ops) => {
      const before = structuredClone(doc);
      try {
        applyJsonPatch(doc, ops);
      } catch (e) {
        ok(e instanceof PatchError, String(e));
        ok(e.at.op !== undefined && e.at.op < ops.length);
      }
      deepEqual(doc, before);
    }),
    { numRuns: 1000 },
  );
});
