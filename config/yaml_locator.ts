/**
 * Maps YAML paths back to positions in the source text, so that errors found
 * on the plain JS value can point at the line and column they came from.
 *
 * @module
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type LineCounter, type Node } from "yaml";
import type { PathSegment } from "./config_error.ts";

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** Whether to point at a mapping entry's key or at its value. */
export type Target = "key" | "value";

/** Finds the position of the node at a path in one parsed document. */
export class YamlLocator {
  readonly #doc: Document;
  readonly #lines: LineCounter;

  constructor(doc: Document, lines: LineCounter) {
    this.#doc = doc;
    this.#lines = lines;
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
      const seg = path[i];
      if (isAlias(node)) node = node.resolve(this.#doc);
      let keyNode: unknown;
      let next: unknown;
      if (isMap(node)) {
        const pair = node.items.find((p) => keyText(p.key) === String(seg));
        if (!pair) break;
        keyNode = pair.key;
        next = pair.value;
      } else if (isSeq(node) && typeof seg === "number" && seg < node.items.length) {
        next = node.items[seg];
      } else {
        break;
      }
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
      if (isAlias(node)) node = node.resolve(this.#doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => keyText(p.key) === String(seg));
        if (!pair) return false;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number" && seg < node.items.length) {
        node = node.items[seg];
      } else {
        return false;
      }
    }
    return true;
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
