/**
 * A unified diff of two lists of lines, bounded in time, memory and output:
 * what a dry-run ApplyConfiguration shows of the config in force against the
 * requested one. Lines common to both ends are set aside first (a config
 * change is usually one place); the rest is Myers' O((N+M)·D) algorithm with
 * D capped at {@link MAX_DIFF_EDITS} and its work at {@link MAX_DIFF_STEPS},
 * past which the middle is shown as all removed then all added (still a
 * correct diff, only not the shortest). The
 * text stops at {@link MAX_DIFF_BYTES} with a last line saying so.
 *
 * @module
 */

/** Edits Myers may search for before the middle is shown whole (memory ~4·D² bytes). */
export const MAX_DIFF_EDITS = 1_000;

/**
 * Diagonals visited plus lines compared before Myers gives up (about 50 ms):
 * bounds the time on any input, however its edits and runs are arranged.
 */
export const MAX_DIFF_STEPS = 10_000_000;

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
  /** @default MAX_DIFF_STEPS */
  readonly maxSteps?: number;
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
  const ops = editScript(a, b, o.maxEdits ?? MAX_DIFF_EDITS, o.maxSteps ?? MAX_DIFF_STEPS);
  if (ops.every((op) => op.t === " ")) return { text: "", truncated: false };
  const [from, to] = o.names ?? ["a", "b"];
  const out = new BoundedText(o.maxBytes ?? MAX_DIFF_BYTES);
  out.line(`--- ${from}`);
  out.line(`+++ ${to}`);
  writeHunks(out, ops, o.context ?? 3);
  return out.result();
}

/** Every line of `a` and `b` as kept, removed or added, in order. */
function editScript(
  a: readonly string[],
  b: readonly string[],
  maxEdits: number,
  maxSteps: number,
): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (
    suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]
  ) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const middle = myers(midA, midB, maxEdits, maxSteps) ?? [
    ...midA.map((s) => ({ t: "-", s }) as const),
    ...midB.map((s) => ({ t: "+", s }) as const),
  ];
  const keep = (s: string): Op => ({ t: " ", s });
  return [...a.slice(0, pre).map(keep), ...middle, ...a.slice(a.length - suf).map(keep)];
}

/**
 * The shortest edit script (Myers 1986), or undefined past `maxD` edits or
 * `maxSteps` steps. `trace[d]` keeps the furthest x per diagonal
 * k ∈ [-d-1, d+1] before round d.
 */
function myers(
  a: readonly string[],
  b: readonly string[],
  maxD: number,
  maxSteps: number,
): Op[] | undefined {
  const n = a.length, m = b.length, off = n + m + 1;
  const v = new Int32Array(2 * off + 1);
  const trace: Int32Array[] = [];
  let steps = 0;
  for (let d = 0; d <= Math.min(n + m, maxD); d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])
        ? v[off + k + 1]
        : v[off + k - 1] + 1;
      let y = x - k;
      const start = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      steps += 1 + x - start;
      if (steps > maxSteps) return undefined;
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

/**
 * Writes the changed runs with `context` lines around, joined when their
 * context meets, in one pass (line numbers kept by a cursor), stopping at
 * `maxBytes` with a last line saying so.
 */
function writeHunks(
  out: BoundedText,
  ops: readonly Op[],
  context: number,
): void {
  const changed = ops.flatMap((op, i) => op.t === " " ? [] : [i]);
  let cursor = 0, aBefore = 0, bBefore = 0;
  const side = (op: Op, s: "-" | "+") => op.t === " " || op.t === s;
  let i = 0;
  while (i < changed.length && !out.full) {
    let j = i;
    while (j + 1 < changed.length && changed[j + 1] - changed[j] <= 2 * context + 1) j++;
    const start = Math.max(0, changed[i] - context);
    const end = Math.min(ops.length, changed[j] + context + 1);
    for (; cursor < start; cursor++) {
      if (side(ops[cursor], "-")) aBefore++;
      if (side(ops[cursor], "+")) bBefore++;
    }
    let aLen = 0, bLen = 0;
    for (let x = start; x < end; x++) {
      if (side(ops[x], "-")) aLen++;
      if (side(ops[x], "+")) bLen++;
    }
    out.line(`@@ -${range(aBefore, aLen)} +${range(bBefore, bLen)} @@`);
    for (let x = start; x < end && !out.full; x++) out.line(ops[x].t + ops[x].s);
    i = j + 1;
  }
}

/**
 * A hunk side as GNU diff writes it: `,1` left out, an empty side naming the
 * line before it.
 */
function range(before: number, n: number): string {
  return n === 1 ? `${before + 1}` : `${n === 0 ? before : before + 1},${n}`;
}

/** Lines joined up to `maxBytes` (UTF-8); past it, one last line says the text was cut. */
class BoundedText {
  #lines: string[] = [];
  #bytes = 0;
  full = false;
  #enc = new TextEncoder();

  constructor(readonly maxBytes: number) {}

  line(s: string): void {
    if (this.full) return;
    this.#bytes += this.#enc.encode(s).length + 1;
    if (this.#bytes > this.maxBytes) {
      this.full = true;
      this.#lines.push(`… diff truncated at ${this.maxBytes} bytes`);
      return;
    }
    this.#lines.push(s);
  }

  result(): LineDiff {
    return { text: this.#lines.join("\n") + "\n", truncated: this.full };
  }
}
