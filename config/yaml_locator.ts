/**
 * Maps YAML paths back to positions in the source text, so that errors found
 * on the plain JS value can point at the line and column they came from.
 *
 * One iterative pass over the document indexes every mapping's keys and
 * resolves every alias, and finds duplicate keys on the way (with a Set per
 * mapping, instead of the YAML library's pairwise check). Each lookup then
 * costs one step per path segment, so locating all of a file's errors is
 * linear in the file.
 *
 * @module
 */
import {
  type Alias,
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  type LineCounter,
  type Node,
  type Pair,
  type YAMLMap,
} from "yaml";
import type { PathSegment } from "./config_error.ts";

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** Whether to point at a mapping entry's key or at its value. */
export type Target = "key" | "value";

/** A key that appears twice in one mapping: the later entry and the first one. */
export interface DuplicateKey {
  segments: PathSegment[];
  key: Node;
  first: Node;
}

/** Finds the position of the node at a path in one parsed document. */
export class YamlLocator {
  readonly #doc: Document;
  readonly #lines: LineCounter;
  readonly #keys = new Map<YAMLMap, Map<string, Pair>>();
  readonly #aliases = new Map<Alias, Node | undefined>();
  /** Keys that appear more than once in their mapping, in document order. */
  readonly duplicates: DuplicateKey[] = [];

  constructor(doc: Document, lines: LineCounter) {
    this.#doc = doc;
    this.#lines = lines;
    this.#index();
  }

  /** The 1-based position of a source offset. */
  at(offset: number): Position {
    const { line, col } = this.#lines.linePos(offset);
    return { line, column: col };
  }

  /**
   * The position of the node at `path`. When the path runs past what exists
   * (a missing key), the deepest existing entry is used: the key of the
   * mapping entry holding it, or the sequence item itself.
   */
  locate(path: readonly PathSegment[], target: Target = "value"): Position {
    let node: unknown = this.#doc.contents;
    let anchor: Node | undefined = isNodeWithRange(node) ? node : undefined;
    for (let i = 0; i < path.length; i++) {
      const step = this.#step(node, path[i]);
      if (!step) break;
      const { keyNode, next } = step;
      const last = i === path.length - 1;
      if (last && target === "key" && isNodeWithRange(keyNode)) return this.#start(keyNode);
      if (last && isNodeWithRange(next) && !isEmptyScalar(next)) return this.#start(next);
      anchor = isNodeWithRange(keyNode) ? keyNode : isNodeWithRange(next) ? next : anchor;
      node = next;
    }
    return anchor ? this.#start(anchor) : { line: 1, column: 1 };
  }

  /** True when the mapping entries along `path` all exist in the document. */
  has(path: readonly PathSegment[]): boolean {
    let node: unknown = this.#doc.contents;
    for (const seg of path) {
      const step = this.#step(node, seg);
      if (!step) return false;
      node = step.next;
    }
    return true;
  }

  /** The start of a node. */
  start(node: Node): Position {
    return this.#start(node);
  }

  #step(node: unknown, seg: PathSegment): { keyNode?: unknown; next: unknown } | undefined {
    if (isAlias(node)) node = this.#aliases.get(node);
    if (isMap(node)) {
      const pair = this.#keys.get(node)?.get(String(seg));
      return pair ? { keyNode: pair.key, next: pair.value } : undefined;
    }
    if (isSeq(node) && typeof seg === "number" && seg < node.items.length) {
      return { next: node.items[seg] };
    }
    return undefined;
  }

  /** One pre-order pass (the order in which the YAML library resolves aliases). */
  #index(): void {
    const anchors = new Map<string, Node>();
    const stack: Array<{ node: unknown; path: PathSegment[] }> = [
      { node: this.#doc.contents, path: [] },
    ];
    while (stack.length > 0) {
      const { node, path } = stack.pop()!;
      if (isAlias(node)) {
        this.#aliases.set(node, anchors.get(node.source));
        continue;
      }
      if (!isNodeWithRange(node)) continue;
      if (node.anchor) anchors.set(node.anchor, node);
      const children: Array<{ node: unknown; path: PathSegment[] }> = [];
      if (isMap(node)) {
        const keys = new Map<string, Pair>();
        this.#keys.set(node, keys);
        for (const pair of node.items) {
          if (!isPair(pair)) continue;
          const text = keyText(pair.key);
          const seg = text ?? "?";
          if (text !== undefined) {
            const first = keys.get(text);
            if (first === undefined) keys.set(text, pair);
            else if (isNodeWithRange(pair.key) && isNodeWithRange(first.key)) {
              this.duplicates.push({ segments: [...path, text], key: pair.key, first: first.key });
            }
          }
          children.push({ node: pair.key, path: [...path, seg] });
          children.push({ node: pair.value, path: [...path, seg] });
        }
      } else if (isSeq(node)) {
        node.items.forEach((item, i) => children.push({ node: item, path: [...path, i] }));
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }

  #start(node: Node): Position {
    return this.at(node.range![0]);
  }
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return typeof key === "string" ? key : undefined;
}

function isNodeWithRange(x: unknown): x is Node {
  return typeof x === "object" && x !== null && "range" in x && Array.isArray(x.range);
}

function isEmptyScalar(x: Node): boolean {
  return isScalar(x) && x.value === null && x.range![0] === x.range![1];
}
