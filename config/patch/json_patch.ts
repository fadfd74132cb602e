/**
 * RFC 6902 JSON Patch applied to a JSON document without changing it: each
 * operation (add, remove, replace, move, copy, test) builds a new document
 * that shares what it did not touch, so a failing operation leaves the input
 * as it was and the whole patch applies or nothing does. Errors name the
 * operation's index and pointer (patch_error.ts) and never quote a value.
 *
 * @module
 */
import { listIndex, parsePointer } from "./json_pointer.ts";
import { countValues, isObject, jsonEqual, type JsonValue } from "./json_value.ts";
import { MAX_PATCHED_VALUES } from "./limits.ts";
import { PatchError } from "./patch_error.ts";

/** One operation of a JSON Patch. */
export type PatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: JsonValue }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string };

/** The operations RFC 6902 defines. */
export const PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

/**
 * `doc` with every operation of `ops` applied in order; `doc` is never changed.
 * @throws PatchError naming the operation's index, name and pointer
 */
export function applyJsonPatch(doc: JsonValue, ops: readonly PatchOperation[]): JsonValue {
  let out = doc;
  let size = countValues(doc, MAX_PATCHED_VALUES);
  ops.forEach((op, i) => {
    try {
      const added = op.op === "copy" ? get(out, op.from) : op.op === "add" ? op.value : undefined;
      if (added !== undefined) {
        size += countValues(added, MAX_PATCHED_VALUES);
        if (size > MAX_PATCHED_VALUES) {
          throw new PatchError(
            "limit",
            `the patched document would hold more than ${MAX_PATCHED_VALUES} values`,
            { pointer: op.path },
          );
        }
      }
      out = applyOp(out, op);
    } catch (e) {
      if (!(e instanceof PatchError)) throw e;
      throw new PatchError(e.kind, e.reason, {
        ...e.at,
        op: i,
        opName: op.op,
        pointer: e.at.pointer ?? op.path,
      });
    }
  });
  return out;
}

function applyOp(doc: JsonValue, op: PatchOperation): JsonValue {
  switch (op.op) {
    case "add":
      return put(doc, op.path, op.value, "add");
    case "replace":
      return put(doc, op.path, op.value, "replace");
    case "remove":
      return remove(doc, op.path);
    case "test":
      if (!jsonEqual(get(doc, op.path), op.value)) {
        throw new PatchError("test", "the value there is not the one the test expects", {
          pointer: op.path,
        });
      }
      return doc;
    case "copy":
      return put(doc, op.path, structuredClone(get(doc, op.from)), "add");
    case "move": {
      if (op.path === op.from) {
        get(doc, op.from);
        return doc;
      }
      if (op.path.startsWith(op.from + "/")) {
        throw new PatchError("pointer", "cannot move a value into one of its own children", {
          pointer: op.from,
        });
      }
      const value = get(doc, op.from);
      return put(remove(doc, op.from), op.path, value, "add");
    }
  }
}

/**
 * The value at `pointer`.
 * @throws PatchError (missing) when it does not exist
 */
export function get(doc: JsonValue, pointer: string): JsonValue {
  let at: JsonValue = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(at)) at = at[listIndex(token, at.length, false, pointer)];
    else if (isObject(at) && Object.hasOwn(at, token)) at = at[token];
    else throw missing(pointer);
  }
  return at;
}

/** `doc` with `value` added (or replacing) at `pointer`, copying the containers on the way. */
function put(doc: JsonValue, pointer: string, value: JsonValue, how: "add" | "replace"): JsonValue {
  return change(doc, pointer, (parent, token) => {
    if (Array.isArray(parent)) {
      const i = listIndex(token, parent.length, how === "add", pointer);
      const copy = [...parent];
      copy.splice(i, how === "add" ? 0 : 1, value);
      return copy;
    }
    if (how === "replace" && !Object.hasOwn(parent, token)) throw missing(pointer);
    return { ...parent, [token]: value };
  }, value);
}

function remove(doc: JsonValue, pointer: string): JsonValue {
  if (pointer === "") {
    throw new PatchError("pointer", "cannot remove the whole document", { pointer });
  }
  return change(doc, pointer, (parent, token) => {
    if (Array.isArray(parent)) {
      const i = listIndex(token, parent.length, false, pointer);
      return parent.filter((_, j) => j !== i);
    }
    if (!Object.hasOwn(parent, token)) throw missing(pointer);
    const { [token]: _, ...rest } = parent;
    return rest;
  });
}

/**
 * `doc` with the parent of `pointer` replaced by `edit(parent, lastToken)`;
 * the root itself becomes `rootValue` (an add or replace of `""`).
 */
function change(
  doc: JsonValue,
  pointer: string,
  edit: (parent: JsonValue[] | { [k: string]: JsonValue }, token: string) => JsonValue,
  rootValue?: JsonValue,
): JsonValue {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) {
    if (rootValue === undefined) throw missing(pointer);
    return rootValue;
  }
  const rebuild = (at: JsonValue, depth: number): JsonValue => {
    const token = tokens[depth];
    if (!Array.isArray(at) && !isObject(at)) throw missing(pointer);
    if (depth === tokens.length - 1) return edit(at, token);
    if (Array.isArray(at)) {
      const i = listIndex(token, at.length, false, pointer);
      const copy = [...at];
      copy[i] = rebuild(at[i], depth + 1);
      return copy;
    }
    if (!Object.hasOwn(at, token)) throw missing(pointer);
    return { ...at, [token]: rebuild(at[token], depth + 1) };
  };
  return rebuild(doc, 0);
}

function missing(pointer: string): PatchError {
  return new PatchError("missing", "no value there (or its parent does not exist)", { pointer });
}
