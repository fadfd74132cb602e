/**
 * The largest functions, measured in lines from the source text: a function that does not
 * fit on a screen (80 lines) is the first thing a reader trips over.
 */

/** One function and how many lines its body spans. */
export interface FunctionSize {
  file: string;
  name: string;
  line: number;
  lines: number;
}

const START = new RegExp(
  [
    /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)/.source,
    /^\s*(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)?|[\w$]+\s*=>)/
      .source,
    /^\s*(?:(?:public|private|protected|static|async|override|readonly)\s+)*(?:get\s+|set\s+)?\*?([\w$]+)\s*(?:<[^>]*>)?\([^;]*$/
      .source,
    /^\s*([\w$]+)\s*:\s*(?:async\s+)?(?:function\b|\([^)]*\)?\s*(?::[^=]+)?=>)/.source,
  ].join("|"),
);

const KEYWORDS = new Set(["if", "for", "while", "switch", "catch", "return", "with", "function"]);

/**
 * Index past the block that opens at `open` (a `{`), skipping strings, template literals
 * and comments; -1 when the block never closes.
 */
function blockEnd(text: string, open: number): number {
  let depth = 0;
  const templates: number[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "/" && text[i + 1] === "/") i = text.indexOf("\n", i) - 1;
    else if (c === "/" && text[i + 1] === "*") i = text.indexOf("*/", i + 2) + 1;
    else if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c && text[i] !== "\n"; i++) {
        if (text[i] === "\\") i++;
      }
    } else if (c === "`" || (c === "}" && templates.at(-1) === depth)) {
      if (c === "}") templates.pop(), depth--;
      for (i++; i < text.length && text[i] !== "`"; i++) {
        if (text[i] === "\\") i++;
        else if (text[i] === "$" && text[i + 1] === "{") {
          depth++, templates.push(depth), i++;
          break;
        }
      }
    } else if (c === "{") depth++;
    else if (c === "}") {
      depth--;
      if (depth === 0) return i + 1;
    }
    if (i < 0) return -1;
  }
  return -1;
}

/** The functions of one file with their sizes in lines (from the signature to the `}`). */
export function functionsOf(file: string, text: string): FunctionSize[] {
  const out: FunctionSize[] = [];
  const lines = text.split("\n");
  const offsets: number[] = [];
  let at = 0;
  for (const l of lines) offsets.push(at), at += l.length + 1;
  for (let n = 0; n < lines.length; n++) {
    const m = lines[n].match(START);
    if (m === null) continue;
    const name = m.slice(1).find((g) => g !== undefined) ?? "?";
    if (KEYWORDS.has(name)) continue;
    const open = findBody(text, offsets[n]);
    if (open < 0) continue;
    const end = blockEnd(text, open);
    if (end < 0) continue;
    const endLine = lineAt(offsets, end);
    if (endLine > n) out.push({ file, name, line: n + 1, lines: endLine - n + 1 });
  }
  return out;
}

/** The `{` that opens the body: the first `{` after the parameters' `)` (or `=>`). */
function findBody(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length && i < from + 2000; i++) {
    const c = text[i];
    if (c === "(" || c === "<") depth++;
    else if (c === ")" || (c === ">" && text[i - 1] !== "=")) depth--;
    else if (c === ";" && depth <= 0) return -1;
    else if (c === "{" && depth <= 0) {
      const before = text.slice(from, i);
      if (/\)\s*(:[^{]*)?$|=>\s*$/.test(before)) return i;
      if (depth <= 0 && !/:\s*$/.test(before)) return -1;
    }
  }
  return -1;
}

function lineAt(offsets: number[], pos: number): number {
  let lo = 0, hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The `top` largest functions across `texts`, largest first. */
export function largestFunctions(texts: Map<string, string>, top = 10): FunctionSize[] {
  const all: FunctionSize[] = [];
  for (const [file, text] of texts) all.push(...functionsOf(file, text));
  return all.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file)).slice(0, top);
}
