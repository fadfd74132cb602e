/**
 * The bounds on config patches, checked before the work they bound: the text's
 * size before parsing, its nesting on the parser's token tree before the
 * composer (which recurses), the number of operations before any is applied,
 * a pointer's depth when it is parsed, and the values a patched document may
 * hold as copies grow it. docs/api.md lists them; limits_test.ts tests each
 * at its limit and one past it.
 *
 * @module
 */
import { MAX_CONFIG_BYTES, MAX_DEPTH, MAX_EXPANDED_VALUES } from "../limits.ts";

/**
 * 256 KiB: the patches of one request together, in UTF-8 bytes (a merge patch
 * may carry a whole config, which is bounded the same).
 */
export const MAX_PATCH_BYTES = MAX_CONFIG_BYTES;

/** Operations in one request, all patches together; a merge patch counts as one. */
export const MAX_PATCH_OPS = 1000;

/** Reference tokens in one JSON Pointer, and levels of nesting in a patch text. */
export const MAX_PATCH_DEPTH = MAX_DEPTH;

/**
 * Values (scalars, mappings, lists) a patched document may hold, counted as
 * `copy` and `add` grow it: a chain of copies doubles a document per operation.
 */
export const MAX_PATCHED_VALUES = MAX_EXPANDED_VALUES;
