/**
 * Config patches as a client sends them: text, JSON or YAML (JSON is YAML),
 * either an RFC 6902 JSON Patch (a list of operations) or an RFC 7386 merge
 * patch (an object); the kind is given or inferred from that shape. Texts are
 * bounded before they are parsed (limits.ts) and refused with a
 * {@link PatchError} that names the patch, the operation and the line.
 *
 * @module
 */
import { LineCounter, parseDocument, Parser, visit } from "yaml";
import { checkDepth } from "../limits.ts";
import { PATCH_OPS, type PatchOperation } from "./json_patch.ts";
import { isObject, type JsonValue } from "./json_value.ts";
import { MAX_PATCH_BYTES, MAX_PATCH_OPS } from "./limits.ts";
import { PatchError } from "./patch_error.ts";

/** The two kinds of patch. */
export type PatchType = "json" | "merge";

/** A parsed patch. */
export type ConfigPatch =
  | { readonly type: "json"; readonly ops: readonly PatchOperation[] }
  | { readonly type: "merge"; readonly value: JsonValue };

/** A patch as sent: its text, and its kind unless it is to be inferred. */
export interface PatchText {
  readonly text: string;
  readonly type?: PatchType;
}

/**
 * Parses every patch of a request, checking the request's bounds first
 * (their bytes together, then their operations together).
 * @throws PatchError naming the patch (and operation, or line) at fault
 */
export function parsePatches(texts: readonly PatchText[]): ConfigPatch[] {
  const bytes = texts.reduce((n, t) => n + new TextEncoder().encode(t.text).length, 0);
  if (bytes > MAX_PATCH_BYTES) {
    throw new PatchError(
      "limit",
      `the patches hold ${bytes} bytes; at most ${MAX_PATCH_BYTES} (${
        MAX_PATCH_BYTES / 1024
      } KiB) are accepted`,
    );
  }
  const out = texts.map((t, i) => {
    try {
      return parsePatch(t);
    } catch (e) {
      throw e instanceof PatchError ? e.inPatch(i) : e;
    }
  });
  const ops = out.reduce((n, p) => n + (p.type === "json" ? p.ops.length : 1), 0);
  if (ops > MAX_PATCH_OPS) {
    throw new PatchError(
      "limit",
      `the patches hold ${ops} operations; at most ${MAX_PATCH_OPS} are accepted`,
    );
  }
  return out;
}

/**
 * One patch text: a list is a JSON Patch, an object a merge patch, unless
 * `type` says which it must be.
 * @throws PatchError (syntax, shape, limit)
 */
export function parsePatch(t: PatchText): ConfigPatch {
  const value = parseJsonText(t.text);
  const type = t.type ?? (Array.isArray(value) ? "json" : "merge");
  if (type === "merge") return { type, value };
  if (!Array.isArray(value)) {
    throw new PatchError("shape", "a JSON Patch is a list of operations");
  }
  if (value.length > MAX_PATCH_OPS) {
    throw new PatchError(
      "limit",
      `the patch has ${value.length} operations; at most ${MAX_PATCH_OPS} are accepted`,
    );
  }
  return { type, ops: value.map(toOperation) };
}

/**
 * The JSON value of a JSON or YAML text, refusing what JSON cannot hold
 * (aliases, `.nan`, `.inf`), more than one document, and nesting past the
 * limit before composing.
 */
function parseJsonText(text: string): JsonValue {
  const lines = new LineCounter();
  const tokens = Array.from(new Parser(lines.addNewLine).parse(text));
  const deep = checkDepth(tokens, lines, "patch");
  if (deep) {
    throw new PatchError("limit", deep.message.replace(/ \(.*$/, ""), { line: deep.line });
  }
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  const bad = doc.errors[0] ?? doc.warnings[0];
  if (bad) {
    const line = lines.linePos(bad.pos[0]).line;
    throw new PatchError("syntax", bad.message.split("\n")[0], { line });
  }
  visit(doc, {
    Alias(_, node) {
      const line = node.range ? lines.linePos(node.range[0]).line : undefined;
      throw new PatchError("syntax", "aliases are not accepted in a patch", line ? { line } : {});
    },
  });
  const value = doc.toJS() as unknown;
  if (value === undefined || value === null && text.trim() === "") {
    throw new PatchError("shape", "the patch is empty");
  }
  checkJson(value);
  return value as JsonValue;
}

function checkJson(v: unknown): void {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === "number" && !Number.isFinite(x)) {
      throw new PatchError("shape", "a patch holds only JSON values (no .nan or .inf)");
    }
    if (Array.isArray(x)) stack.push(...x);
    else if (isObject(x)) stack.push(...Object.values(x));
    else if (x !== null && !["string", "number", "boolean"].includes(typeof x)) {
      throw new PatchError("shape", `a patch holds only JSON values, not a ${typeof x}`);
    }
  }
}

/** One operation of a JSON Patch, its shape checked (RFC 6902 section 4). */
function toOperation(v: JsonValue, i: number): PatchOperation {
  const fail = (why: string, opName?: string) =>
    new PatchError("shape", why, { op: i, ...(opName ? { opName } : {}) });
  if (!isObject(v)) throw fail("an operation is an object with op and path");
  const op = v.op;
  if (typeof op !== "string" || !(PATCH_OPS as readonly string[]).includes(op)) {
    throw fail(`op must be one of ${PATCH_OPS.join(", ")}`);
  }
  if (typeof v.path !== "string") throw fail("path must be a string (a JSON Pointer)", op);
  const path = v.path;
  switch (op) {
    case "add":
    case "replace":
    case "test":
      if (!Object.hasOwn(v, "value")) throw fail(`${op} needs a value`, op);
      return { op, path, value: v.value };
    case "move":
    case "copy":
      if (typeof v.from !== "string") throw fail(`${op} needs from (a JSON Pointer)`, op);
      return { op, path, from: v.from };
    default:
      return { op: "remove", path };
  }
}
