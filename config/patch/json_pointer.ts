/**
 * RFC 6901 JSON Pointers: `/machine/services/0/env/A~1B` names a value in a
 * JSON document; `~1` stands for `/` and `~0` for `~` in a token; `""` is the
 * whole document. A list index is `0` or a number without leading zeros, and
 * `-` (the end of a list) is only meaningful to an `add`.
 *
 * @module
 */
import { MAX_PATCH_DEPTH } from "./limits.ts";
import { PatchError } from "./patch_error.ts";

/**
 * The reference tokens of `pointer`, unescaped.
 * @throws PatchError (pointer) when it does not start with `/`, has a bad `~`
 *   escape, or has more than {@link MAX_PATCH_DEPTH} tokens
 */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) {
    throw new PatchError("pointer", 'a JSON Pointer starts with "/" (or is "" for the document)', {
      pointer,
    });
  }
  const raw = pointer.slice(1).split("/");
  if (raw.length > MAX_PATCH_DEPTH) {
    throw new PatchError(
      "limit",
      `the pointer has ${raw.length} tokens; at most ${MAX_PATCH_DEPTH} are accepted`,
      { pointer },
    );
  }
  return raw.map((t) => {
    if (/~(?![01])/.test(t)) {
      throw new PatchError("pointer", '"~" must be followed by 0 or 1 in a JSON Pointer', {
        pointer,
      });
    }
    return t.replaceAll("~1", "/").replaceAll("~0", "~");
  });
}

/** The pointer of `tokens` (escaping `~` and `/`). */
export function formatPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((t) => "/" + String(t).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

/**
 * The list index a token names in a list of `length` items; `-` and
 * `length` itself are the end, which only `add` accepts (`end: true`).
 * @throws PatchError (pointer) for a token that is not an index, or past the end
 */
export function listIndex(
  token: string,
  length: number,
  end: boolean,
  pointer: string,
): number {
  if (token === "-") {
    if (end) return length;
    throw new PatchError("pointer", '"-" (past the end of a list) names no item', { pointer });
  }
  if (!/^(0|[1-9][0-9]*)$/.test(token)) {
    throw new PatchError("pointer", `list index ${JSON.stringify(token)} is not a number`, {
      pointer,
    });
  }
  const i = Number(token);
  if (i > length || (i === length && !end)) {
    throw new PatchError("missing", `list index ${i} is past the end (${length} items)`, {
      pointer,
    });
  }
  return i;
}
