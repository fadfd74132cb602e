/**
 * Turns the YAML library's JS value (in which every alias is a shared or,
 * for a self-referencing alias, a cyclic reference) into the plain tree the
 * schema validates: a copy with empty mapping entries dropped, refused when
 * it has a cycle, is nested past {@link MAX_DEPTH} or expands past
 * {@link MAX_EXPANDED_VALUES}. The walk is iterative, so no input can
 * overflow the stack.
 *
 * @module
 */
import type { PathSegment } from "./config_error.ts";
import { MAX_DEPTH, MAX_EXPANDED_VALUES } from "./limits.ts";

/** Why a value could not be expanded, and where. */
export interface ExpandProblem {
  reason: "cycle" | "depth" | "size";
  segments: PathSegment[];
}

/** The copied tree, or the first problem found. */
export type ExpandResult = { ok: true; value: unknown } | { ok: false; problem: ExpandProblem };

type Container = Record<string, unknown> | unknown[];

interface Frame {
  source: Container;
  copy: Container;
  entries: Array<[PathSegment, unknown]>;
  next: number;
  segment: PathSegment;
}

/**
 * Copies `value`, removing mapping entries whose value is empty (`time:` with
 * nothing after it, or `~`/`null`), so that an empty section means "all
 * defaults" and an empty required key reads as missing. Items of lists are
 * kept: an empty list item is an error.
 */
export function expandValue(value: unknown): ExpandResult {
  if (!isContainer(value)) return { ok: true, value };
  let count = 1;
  const onPath = new Set<unknown>([value]);
  const root = open(value, "");
  const stack: Frame[] = [root];
  const path = (): PathSegment[] => stack.slice(1).map((f) => f.segment);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    if (top.next >= top.entries.length) {
      onPath.delete(top.source);
      stack.pop();
      continue;
    }
    const [segment, child] = top.entries[top.next++];
    if (!Array.isArray(top.copy) && child === null) continue;
    if (++count > MAX_EXPANDED_VALUES) {
      return { ok: false, problem: { reason: "size", segments: [...path(), segment] } };
    }
    if (!isContainer(child)) {
      put(top.copy, segment, child);
      continue;
    }
    if (onPath.has(child)) {
      return { ok: false, problem: { reason: "cycle", segments: [...path(), segment] } };
    }
    if (stack.length >= MAX_DEPTH) {
      return { ok: false, problem: { reason: "depth", segments: [...path(), segment] } };
    }
    const frame = open(child, segment);
    put(top.copy, segment, frame.copy);
    onPath.add(child);
    stack.push(frame);
  }
  return { ok: true, value: root.copy };
}

function isContainer(x: unknown): x is Container {
  return typeof x === "object" && x !== null;
}

function open(source: Container, segment: PathSegment): Frame {
  const entries: Array<[PathSegment, unknown]> = Array.isArray(source)
    ? source.map((item, i) => [i, item])
    : Object.entries(source);
  return { source, copy: Array.isArray(source) ? [] : {}, entries, next: 0, segment };
}

function put(copy: Container, segment: PathSegment, value: unknown): void {
  if (Array.isArray(copy)) copy.push(value);
  // A "__proto__" key is data, not the prototype.
  else {Object.defineProperty(copy, segment, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });}
}
