/**
 * What a patch may not do to the config's secrets (today `machine.ca.key`,
 * config/secrets.ts), which a client never sees and a patch is applied over
 * on the node: a `test` at or above a secret would answer whether a guess is
 * right; a `copy` or `move` out of one into another place would leave it
 * where a reader sees it; and a patch that leaves the placeholder
 * `(redacted)` where a secret is would replace the secret with it (an editor
 * saving the redacted rendering back). Each is refused with a
 * {@link PatchError} of kind `secret`, naming where and never what.
 *
 * @module
 */
import { REDACTED, SECRET_PATHS, touchesSecret } from "../secrets.ts";
import { formatPointer, parsePointer } from "./json_pointer.ts";
import type { PatchOperation } from "./json_patch.ts";
import { isObject, type JsonValue } from "./json_value.ts";
import { PatchError } from "./patch_error.ts";

/**
 * Refuses an operation of a JSON Patch that would read a secret out.
 * @throws PatchError (secret) naming the operation
 */
export function guardOperations(ops: readonly PatchOperation[]): void {
  ops.forEach((op, i) => {
    const at = { op: i, opName: op.op };
    if (op.op === "test" && touchesSecret(parsePointer(op.path))) {
      throw new PatchError(
        "secret",
        "a test at or above a secret would tell its value; test another field",
        { ...at, pointer: op.path },
      );
    }
    if ((op.op === "copy" || op.op === "move") && touchesSecret(parsePointer(op.from))) {
      if (!sameField(parsePointer(op.from), parsePointer(op.path))) {
        throw new PatchError(
          "secret",
          `a ${op.op} from a secret (or what holds one) may only go to the same field of another list item`,
          { ...at, pointer: op.from },
        );
      }
    }
  });
}

/**
 * Refuses a patched document holding the placeholder {@link REDACTED} where
 * a secret goes.
 * @throws PatchError (secret) naming the first such pointer
 */
export function guardPlaceholders(doc: JsonValue): void {
  for (const path of SECRET_PATHS) {
    const found = placeholderAt(doc, path, []);
    if (found) {
      throw new PatchError(
        "secret",
        `the patch would write the placeholder ${
          JSON.stringify(REDACTED)
        } as the secret; leave the redacted value out of the patch to keep the secret, or give its new value`,
        { pointer: formatPointer(found) },
      );
    }
  }
}

function placeholderAt(
  v: JsonValue,
  path: readonly string[],
  at: (string | number)[],
): (string | number)[] | undefined {
  if (path.length === 0) return v === REDACTED ? at : undefined;
  const [head, ...rest] = path;
  const children: [string | number, JsonValue][] = Array.isArray(v)
    ? (head === "*" ? v.map((x, i) => [i, x]) : [])
    : isObject(v)
    ? (head === "*" ? Object.entries(v) : Object.hasOwn(v, head) ? [[head, v[head]]] : [])
    : [];
  for (const [k, child] of children) {
    const found = placeholderAt(child, rest, [...at, k]);
    if (found) return found;
  }
  return undefined;
}

/** Whether two pointers name the same field, list indexes aside. */
function sameField(a: readonly string[], b: readonly string[]): boolean {
  const index = (t: string) => t === "-" || /^[0-9]+$/.test(t);
  return a.length === b.length && a.every((t, i) => t === b[i] || (index(t) && index(b[i])));
}
