/**
 * RFC 7386 JSON Merge Patch: an object patch sets each member it names (a
 * `null` member removes it) and merges into nested objects; anything else
 * (a list, a scalar) replaces the target whole. The target is never changed.
 * {@link mergePatchOf} writes the merge patch from one document to another.
 *
 * @module
 */
import { isObject, jsonEqual, type JsonObject, type JsonValue } from "./json_value.ts";

/** `target` with `patch` merged in (RFC 7386, section 2); `target` is not changed. */
export function applyMergePatch(target: JsonValue, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setOwn(out, key, applyMergePatch(Object.hasOwn(out, key) ? out[key] : null, value));
  }
  return out;
}

/**
 * A merge patch taking `from` to `to`. A merge patch cannot write `null`
 * inside an object (it means "remove"), so `to` must hold none there for the
 * patch to reach it exactly; lists are replaced whole.
 */
export function mergePatchOf(from: JsonValue, to: JsonValue): JsonValue {
  if (!isObject(from) || !isObject(to)) return to;
  const out: JsonObject = {};
  for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) setOwn(out, key, null);
  for (const [key, value] of Object.entries(to)) {
    if (!Object.hasOwn(from, key)) setOwn(out, key, value);
    else if (!jsonEqual(from[key], value)) setOwn(out, key, mergePatchOf(from[key], value));
  }
  return out;
}

/** `obj[key] = value` as an own member even for `__proto__` (no prototype is ever set). */
function setOwn(obj: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
