/**
 * The bounds on a machine config's text, checked before the work they bound:
 * the size before parsing, the nesting depth on the parser's token tree
 * before the composer (which recurses) builds the document. A real machine
 * config is a few KiB deep a dozen levels; these limits are far past that.
 *
 * @module
 */
import { CST, type LineCounter } from "yaml";
import { ConfigError, type PathSegment } from "./config_error.ts";

/** 256 KiB: the largest config text accepted (UTF-8 bytes); refused before parsing. */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** Mappings and lists nested deeper than this are refused (a machine config needs about 8). */
export const MAX_DEPTH = 64;

/**
 * Alias expansions weighted by the aliases inside what they expand (the YAML
 * library's measure); past it the document is refused as a "billion laughs".
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * Values (scalars, mappings, lists) the document may hold once every alias is
 * expanded; bounds alias fan-out that {@link MAX_ALIAS_COUNT} does not weigh.
 */
export const MAX_EXPANDED_VALUES = 200_000;

/** Errors reported in full; the rest are counted in one last "and N more" error. */
export const MAX_REPORTED_ERRORS = 100;

/** A `limit` error, refusing a config that exceeds one of the bounds above. */
export function limitError(
  source: string,
  message: string,
  at: { segments?: readonly PathSegment[]; line?: number; column?: number; hint?: string } = {},
): ConfigError {
  return new ConfigError({
    kind: "limit",
    source,
    segments: at.segments ?? [],
    line: at.line ?? 1,
    column: at.column ?? 1,
    message,
    hint: at.hint,
  });
}

/** The refusal of a text over {@link MAX_CONFIG_BYTES}, or undefined; O(n) without allocating. */
export function checkSize(
  text: string,
  source: string,
  max = MAX_CONFIG_BYTES,
): ConfigError | undefined {
  // Each UTF-16 unit is at least one UTF-8 byte, at most three.
  if (text.length * 3 <= max) return undefined;
  const bytes = text.length > max ? text.length : utf8Length(text);
  if (bytes <= max) return undefined;
  const kib = max % 1024 === 0 ? ` (${max / 1024} KiB)` : "";
  return limitError(
    source,
    `the config is at least ${bytes} bytes, over the limit of ${max} bytes${kib}`,
    { hint: "a machine config is a few KiB; split out what does not belong in it" },
  );
}

function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** A collection on the walk; `parent` and `at` give its path without copying one per node. */
interface Frame {
  token: CST.Token;
  depth: number;
  parent?: Frame;
  at?: CST.Token | number | null;
}

/**
 * The refusal of the first collection nested deeper than {@link MAX_DEPTH} in
 * the parser's token tree, with its path and position, or undefined. The walk
 * is iterative, so any depth is measured without recursing.
 */
export function checkDepth(
  tokens: readonly CST.Token[],
  lines: LineCounter,
  source: string,
): ConfigError | undefined {
  const stack: Frame[] = [];
  for (const token of tokens) {
    if (token.type === "document" && token.value) stack.push({ token: token.value, depth: 0 });
  }
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { token, depth } = frame;
    if (
      token.type !== "block-map" && token.type !== "block-seq" && token.type !== "flow-collection"
    ) continue;
    if (depth + 1 > MAX_DEPTH) {
      const { line, col } = lines.linePos(token.offset);
      return limitError(
        source,
        `mappings and lists are nested more than ${MAX_DEPTH} levels deep`,
        {
          segments: pathOf(frame),
          line,
          column: col,
          hint: "a machine config needs about a dozen levels",
        },
      );
    }
    const isMap = token.type === "block-map" ||
      (token.type === "flow-collection" && token.start.source === "{");
    // Push in reverse so the first item is examined first (errors in file order).
    for (let i = token.items.length - 1; i >= 0; i--) {
      const item = token.items[i] as { key?: CST.Token | null; value?: CST.Token };
      const at = isMap ? item.key : i;
      const next = { depth: depth + 1, parent: frame, at };
      if (item.value) stack.push({ token: item.value, ...next });
      if (item.key) stack.push({ token: item.key, ...next });
    }
  }
  return undefined;
}

function pathOf(frame: Frame): PathSegment[] {
  const path: PathSegment[] = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) {
    path.unshift(typeof f.at === "number" ? f.at : keySegment(f.at));
  }
  return path;
}

function keySegment(key: CST.Token | null | undefined): string {
  if (!key) return "";
  const scalar = CST.resolveAsScalar(key, true, () => {});
  return scalar ? String(scalar.value) : "?";
}
