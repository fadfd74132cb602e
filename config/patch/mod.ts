/**
 * Config patches: RFC 6902 JSON Patch and RFC 7386 merge patch over the
 * machine config's document, as the node applies them for ApplyConfiguration
 * (over the config in force, secrets included) and as `machinectl edit`
 * computes them. Pure and bounded (limits.ts); every refusal is a
 * {@link PatchError} naming the patch, operation and pointer, never a value.
 *
 * @example
 * ```ts
 * import { applyPatches, parsePatches } from "./config/patch/mod.ts";
 *
 * const patches = parsePatches([{ text: '[{"op":"replace","path":"/machine/hostname","value":"b"}]' }]);
 * const doc = applyPatches({ version: "v1alpha1", machine: { hostname: "a" } }, patches);
 * // doc.machine.hostname is "b"
 * ```
 * @module
 */
export { applyPatches } from "./apply_patches.ts";
export { applyJsonPatch, get as pointerGet, PATCH_OPS, type PatchOperation } from "./json_patch.ts";
export { formatPointer, parsePointer } from "./json_pointer.ts";
export { jsonPatchOf } from "./json_patch_diff.ts";
export { isObject, jsonEqual, type JsonObject, type JsonValue } from "./json_value.ts";
export { MAX_PATCH_BYTES, MAX_PATCH_DEPTH, MAX_PATCH_OPS, MAX_PATCHED_VALUES } from "./limits.ts";
export { applyMergePatch, mergePatchOf } from "./merge_patch.ts";
export { isPatchError, PatchError, type PatchErrorAt, type PatchErrorKind } from "./patch_error.ts";
export {
  type ConfigPatch,
  parsePatch,
  parsePatches,
  type PatchText,
  type PatchType,
} from "./patch_text.ts";
export { guardOperations, guardPlaceholders } from "./secret_guard.ts";
export { type PatchedText, renderPatched } from "./render_patched.ts";
