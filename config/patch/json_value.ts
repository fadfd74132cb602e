/**
 * JSON values as patches see them, and the pure helpers over them: a check
 * that an untrusted value is plain JSON, structural equality, and a bounded
 * count of the values a tree holds.
 *
 * @module
 */
import { deepEqual } from "../config_diff.ts";

/** A JSON value: what a parsed config document or a patch holds. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** Whether `v` is a JSON object (not a list, not null). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Structural equality (numbers by value, objects by members). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return deepEqual(a, b);
}

/**
 * The number of values in `v` (1 for a scalar, 1 + its members for a
 * container), counting no further than `limit + 1`: the walk stops once past
 * it, so counting costs at most the limit.
 */
export function countValues(v: unknown, limit: number): number {
  let n = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0 && n <= limit) {
    const x = stack.pop();
    n++;
    if (Array.isArray(x)) stack.push(...x);
    else if (isObject(x)) stack.push(...Object.values(x));
  }
  return n;
}
