/**
 * Reading a parsed-but-unvalidated YAML document (what the cross-field checks
 * see before the schema has typed it): a mapping, a list or a string, or
 * nothing when the value is some other shape. One copy for every
 * `*_checks.ts`.
 *
 * @module
 */

/** A YAML mapping as the parser gives it. */
export type Obj = Record<string, unknown>;

/** `x` when it is a mapping (not null, not a list); undefined otherwise. */
export const obj = (x: unknown): Obj | undefined =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? x as Obj : undefined;

/** `x` when it is a list; an empty list otherwise. */
export const list = (x: unknown): unknown[] => Array.isArray(x) ? x : [];

/** `x` when it is a string; undefined otherwise. */
export const str = (x: unknown): string | undefined => typeof x === "string" ? x : undefined;
