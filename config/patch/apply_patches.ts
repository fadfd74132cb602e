/**
 * A request's patches applied to the config document in force, in order, as
 * one change: a JSON Patch (json_patch.ts) or a merge patch (merge_patch.ts)
 * each, the secrets guarded (secret_guard.ts). The input is never changed,
 * so a refusal anywhere leaves nothing half-applied.
 *
 * @module
 */
import { applyJsonPatch } from "./json_patch.ts";
import type { JsonValue } from "./json_value.ts";
import { applyMergePatch } from "./merge_patch.ts";
import { PatchError } from "./patch_error.ts";
import type { ConfigPatch } from "./patch_text.ts";
import { guardOperations, guardPlaceholders } from "./secret_guard.ts";

/**
 * `doc` with every patch applied in order.
 * @throws PatchError naming the patch, the operation and the pointer at fault
 */
export function applyPatches(doc: JsonValue, patches: readonly ConfigPatch[]): JsonValue {
  let out = doc;
  patches.forEach((p, i) => {
    try {
      if (p.type === "json") {
        guardOperations(p.ops);
        out = applyJsonPatch(out, p.ops);
      } else {
        out = applyMergePatch(out, p.value);
      }
    } catch (e) {
      throw e instanceof PatchError ? e.inPatch(i) : e;
    }
  });
  guardPlaceholders(out);
  return out;
}
