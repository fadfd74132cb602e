/**
 * The text of a patched config: the text in force edited in place where the
 * YAML document allows it, so its comments, key order and spelling survive
 * a patch (an operator's `machinectl edit` keeps the notes in the file), and
 * a fresh rendering otherwise. The in-place text is used only when it parses
 * back to exactly the patched document; anything else (aliases, a change the
 * in-place edit cannot express) falls back to the rendering, which is always
 * right.
 *
 * @module
 */
import {
  type Document,
  isAlias,
  isCollection,
  isNode,
  isScalar,
  parseDocument,
  stringify,
  visit,
} from "yaml";
import { expandValue } from "../expand.ts";
import { deepEqual } from "../config_diff.ts";
import { parsePointer } from "./json_pointer.ts";
import type { PatchOperation } from "./json_patch.ts";
import { jsonPatchOf } from "./json_patch_diff.ts";
import type { JsonValue } from "./json_value.ts";

/** How the text was made: edited in place, or rendered afresh. */
export type PatchedText = { readonly text: string; readonly inPlace: boolean };

/**
 * The text of `after`, edited from `baseText` (whose document is `before`)
 * when that yields the same document.
 */
export function renderPatched(baseText: string, before: JsonValue, after: JsonValue): PatchedText {
  const fresh = () => ({
    text: stringify(after, { aliasDuplicateObjects: false, lineWidth: 0 }),
    inPlace: false,
  });
  let text: string;
  try {
    const doc = parseDocument(baseText, { uniqueKeys: true });
    if (doc.errors.length > 0 || sharesNodes(doc)) return fresh();
    for (const op of jsonPatchOf(before, after)) edit(doc, op);
    text = doc.toString({ lineWidth: 0 });
  } catch {
    return fresh();
  }
  const back = expandValue(parseDocument(text).toJS());
  const want = expandValue(after);
  return back.ok && want.ok && deepEqual(back.value, want.value)
    ? { text, inPlace: true }
    : fresh();
}

/** Anchors and aliases share nodes; an edit through one would change the other. */
function sharesNodes(doc: Document): boolean {
  let shared = false;
  visit(doc, (_, node) => {
    if (isAlias(node) || (isNode(node) && node.anchor)) {
      shared = true;
      return visit.BREAK;
    }
  });
  return shared;
}

/** One operation of the diff (add, remove, replace only) applied to the YAML document. */
function edit(doc: Document, op: PatchOperation): void {
  const path = parsePointer(op.path).map((t) => (/^(0|[1-9][0-9]*)$/.test(t) ? Number(t) : t));
  if (op.op === "remove") {
    doc.deleteIn(path);
    return;
  }
  if (op.op !== "add" && op.op !== "replace") throw new TypeError(`unexpected ${op.op}`);
  const parent = path.length > 1 ? doc.getIn(path.slice(0, -1), true) : doc.contents;
  const last = path.at(-1)!;
  const existing = path.length > 0 ? doc.getIn(path, true) : undefined;
  if (
    op.op === "replace" && isScalar(existing) && (op.value === null || typeof op.value !== "object")
  ) {
    // The node stays, with its comments; only its value changes.
    existing.value = op.value;
    return;
  }
  const node = doc.createNode(op.value);
  if (op.op === "add" && typeof last === "number" && isCollection(parent) && "items" in parent) {
    (parent.items as unknown[]).splice(last, 0, node);
    return;
  }
  if (path.length === 0) {
    doc.contents = node;
    return;
  }
  doc.setIn(path, node);
}
