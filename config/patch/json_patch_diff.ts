/**
 * The JSON Patch from one document to another, as small as a linear walk
 * finds it: objects member by member, lists by their common ends (so that
 * removing or inserting one item is one operation and the items around it
 * are not rewritten), equal-length lists item by item. `machinectl edit`
 * sends this patch rather than the edited document, so values the client
 * never saw whole (a redacted secret) stay as the node has them unless the
 * operator changed them.
 *
 * @module
 */
import { formatPointer } from "./json_pointer.ts";
import type { PatchOperation } from "./json_patch.ts";
import { isObject, jsonEqual, type JsonValue } from "./json_value.ts";

/** Operations taking `from` to `to` (applyJsonPatch(from, ops) equals `to`). */
export function jsonPatchOf(from: JsonValue, to: JsonValue): PatchOperation[] {
  const ops: PatchOperation[] = [];
  diff(from, to, [], ops);
  return ops;
}

function diff(a: JsonValue, b: JsonValue, at: (string | number)[], ops: PatchOperation[]): void {
  if (jsonEqual(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(a)) {
      if (!Object.hasOwn(b, k)) ops.push({ op: "remove", path: formatPointer([...at, k]) });
    }
    for (const [k, v] of Object.entries(b)) {
      if (!Object.hasOwn(a, k)) ops.push({ op: "add", path: formatPointer([...at, k]), value: v });
      else diff(a[k], v, [...at, k], ops);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) return diffList(a, b, at, ops);
  ops.push({ op: "replace", path: formatPointer(at), value: b });
}

function diffList(a: JsonValue[], b: JsonValue[], at: (string | number)[], ops: PatchOperation[]) {
  let head = 0;
  while (head < a.length && head < b.length && jsonEqual(a[head], b[head])) head++;
  let tail = 0;
  while (
    tail < a.length - head && tail < b.length - head &&
    jsonEqual(a[a.length - 1 - tail], b[b.length - 1 - tail])
  ) tail++;
  const oldMid = a.length - head - tail, newMid = b.length - head - tail;
  const paired = Math.min(oldMid, newMid);
  // Items in both middles change in place; the rest is removed or inserted.
  for (let i = 0; i < paired; i++) diff(a[head + i], b[head + i], [...at, head + i], ops);
  for (let i = oldMid - 1; i >= paired; i--) {
    ops.push({ op: "remove", path: formatPointer([...at, head + i]) });
  }
  for (let i = paired; i < newMid; i++) {
    ops.push({ op: "add", path: formatPointer([...at, head + i]), value: b[head + i] });
  }
}
