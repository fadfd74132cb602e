/**
 * A unified diff of two lists of lines, bounded in time, memory and output:
 * what a dry-run ApplyConfiguration shows of the config in force against the
 * requested one. Lines common to both ends are set aside first (a config
 * change is usually one place); the rest is Myers' O((N+M)·D) algorithm with
 * D capped at {@link MAX_DIFF_EDITS}, past which the middle is shown as all
 * removed then all added (still a correct diff, only not the shortest). The
 * text stops at {@link MAX_DIFF_BYTES} with a last line saying so.
 *
 * @module
 */

/** Edits Myers may search for before the middle is shown whole (memory ~4·D² bytes). */
export const MAX_DIFF_EDITS = 1_000;

/** 64 KiB: the diff text is cut past this many UTF-8 bytes. */
export const MAX_DIFF_BYTES = 64 * 1024;

/** Options of {@link unifiedLineDiff}. */
export interface LineDiffOptions {
  /** Unchanged lines shown around each change. @default 3 */
  readonly context?: number;
  /** @default MAX_DIFF_BYTES */
  readonly maxBytes?: number;
  /** @default MAX_DIFF_EDITS */
  readonly maxEdits?: number;
  /** The `---` and `+++` names. @default ["a", "b"] */
  readonly names?: readonly [string, string];
}

/** The diff text (empty when the lines are equal) and whether it was cut. */
export interface LineDiff {
  readonly text: string;
  readonly truncated: boolean;
}

type Op = { readonly t: " " | "-" | "+"; readonly s: string };

/** `a` against `b` as a unified diff (`---`/`+++`, `@@ -l,n +l,n @@` hunks). */
export function unifiedLineDiff(
  a: readonly string[],
  b: readonly string[],
  o: LineDiffOptions = {},
): LineDiff {
  const ops = editScript(a, b, o.maxEdits ?? MAX_DIFF_EDITS);
  if (ops.every((op) => op.t === " ")) return { text: "", truncated: false };
  const [from, to] = o.names ?? ["a", "b"];
  const lines = [`--- ${from}`, `+++ ${to}`, ...hunks(ops, o.context ?? 3)];
  return cap(lines, o.maxBytes ?? MAX_DIFF_BYTES);
}

/** Every line of `a` and `b` as kept, removed or added, in order. */
function editScript(a: readonly string[], b: readonly string[], maxEdits: number): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (
    suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]
  ) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const middle = myers(midA, midB, maxEdits) ?? [
    ...midA.map((s) => ({ t: "-", s }) as const),
    ...midB.map((s) => ({ t: "+", s }) as const),
  ];
  const keep = (s: string): Op => ({ t: " ", s });
  return [...a.slice(0, pre).map(keep), ...middle, ...a.slice(a.length - suf).map(keep)];
}

/**
 * The shortest edit script (Myers 1986), or undefined past `maxD` edits.
 * `trace[d]` keeps the furthest x per diagonal k ∈ [-d-1, d+1] before round d.
 */
function myers(a: readonly string[], b: readonly string[], maxD: number): Op[] | undefined {
  const n = a.length, m = b.length, off = n + m + 1;
  const v = new Int32Array(2 * off + 1);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(n + m, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])
        ? v[off + k + 1]
        : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace);
    }
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[]): Op[] {
  const out: Op[] = [];
  let x = a.length, y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const at = (k: number) => trace[d][k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const px = at(prevK), py = px - prevK;
    while (x > px && y > py) {
      out.push({ t: " ", s: a[--x] });
      y--;
    }
    if (d > 0) out.push(x === px ? { t: "+", s: b[--y] } : { t: "-", s: a[--x] });
  }
  return out.reverse();
}

/** The changed runs with `context` lines around, joined when their context meets. */
function hunks(ops: readonly Op[], context: number): string[] {
  const changed = ops.flatMap((op, i) => op.t === " " ? [] : [i]);
  const out: string[] = [];
  let i = 0;
  while (i < changed.length) {
    let j = i;
    while (j + 1 < changed.length && changed[j + 1] - changed[j] <= 2 * context + 1) j++;
    const start = Math.max(0, changed[i] - context);
    const end = Math.min(ops.length, changed[j] + context + 1);
    out.push(header(ops, start, end), ...ops.slice(start, end).map((op) => op.t + op.s));
    i = j + 1;
  }
  return out;
}

/**
 * `@@ -l,n +l,n @@` for ops[start, end), as GNU diff writes it: `,1` left out,
 * an empty side naming the line before it.
 */
function header(ops: readonly Op[], start: number, end: number): string {
  const count = (from: number, to: number, side: "-" | "+") =>
    ops.slice(from, to).filter((op) => op.t === " " || op.t === side).length;
  const range = (side: "-" | "+") => {
    const before = count(0, start, side), n = count(start, end, side);
    return n === 1 ? `${before + 1}` : `${n === 0 ? before : before + 1},${n}`;
  };
  return `@@ -${range("-")} +${range("+")} @@`;
}

/** `lines` joined, cut before the line that would pass `maxBytes`, with a last line saying so. */
function cap(lines: readonly string[], maxBytes: number): LineDiff {
  const enc = new TextEncoder();
  let bytes = 0;
  for (let i = 0; i < lines.length; i++) {
    bytes += enc.encode(lines[i]).length + 1;
    if (bytes > maxBytes) {
      const rest = lines.length - i;
      const note = `… diff truncated at ${maxBytes} bytes (${rest} more line${
        rest === 1 ? "" : "s"
      })`;
      return { text: [...lines.slice(0, i), note].join("\n") + "\n", truncated: true };
    }
  }
  return { text: lines.join("\n") + "\n", truncated: false };
}
