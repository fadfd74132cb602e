import { deepEqual, equal, match, ok } from "node:assert/strict";
import fc from "fast-check";
import { MAX_DIFF_BYTES, unifiedLineDiff } from "./line_diff.ts";

const lines = (s: string) => s.split("");

/** What a full-context diff says each side was. */
function sides(text: string): { a: string[]; b: string[]; edits: number } {
  const body = text.split("\n").slice(2).filter((l) => l !== "" && !l.startsWith("@@"));
  return {
    a: body.filter((l) => l[0] !== "+").map((l) => l.slice(1)),
    b: body.filter((l) => l[0] !== "-").map((l) => l.slice(1)),
    edits: body.filter((l) => l[0] !== " ").length,
  };
}

function lcs(a: readonly string[], b: readonly string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.length][b.length];
}

Deno.test("equal lines: no diff", () => {
  deepEqual(unifiedLineDiff(["a", "b"], ["a", "b"]), { text: "", truncated: false });
  deepEqual(unifiedLineDiff([], []), { text: "", truncated: false });
});

Deno.test("hunks, headers and context as GNU diff -u writes them", () => {
  const a = ["1", "2", "3", "4", "5", "6", "7", "8", "9"];
  const b = ["1", "2", "3", "4", "five", "6", "7", "8", "9"];
  equal(
    unifiedLineDiff(a, b, { names: ["in force", "requested"] }).text,
    "--- in force\n+++ requested\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
  );
  // Far-apart changes are two hunks; an empty side names the line before it; `,1` is left out.
  const two = unifiedLineDiff([...a, "10", "11", "12"], ["0", ...a, "10", "11"]).text;
  equal(
    two,
    "--- a\n+++ b\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n@@ -9,4 +10,3 @@\n 9\n 10\n 11\n-12\n",
  );
  equal(unifiedLineDiff(["x"], []).text, "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
  equal(unifiedLineDiff([], ["x"]).text, "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n");
});

Deno.test("property: a full-context diff rebuilds both sides with the fewest edits", () => {
  fc.assert(
    fc.property(
      fc.string({ unit: fc.constantFrom("a", "b", "c") }),
      fc.string({
        unit: fc.constantFrom("a", "b", "c"),
      }),
      (x, y) => {
        const a = lines(x), b = lines(y);
        const d = unifiedLineDiff(a, b, { context: 1_000 });
        if (x === y) return d.text === "";
        const s = sides(d.text);
        deepEqual(s.a, a);
        deepEqual(s.b, b);
        equal(s.edits, a.length + b.length - 2 * lcs(a, b));
        return true;
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("past maxEdits the middle is all removed then all added, still correct", () => {
  const a = Array.from({ length: 50 }, (_, i) => `a${i}`);
  const b = Array.from({ length: 50 }, (_, i) => i % 2 ? `a${i}` : `b${i}`);
  const d = unifiedLineDiff(["top", ...a, "end"], ["top", ...b, "end"], {
    maxEdits: 3,
    context: 1_000,
  });
  const s = sides(d.text);
  deepEqual(s.a, ["top", ...a, "end"]);
  deepEqual(s.b, ["top", ...b, "end"]);
  equal(s.edits, 98, "the 48 unchanged lines inside the middle are shown as changed");
});

Deno.test("the text is cut at maxBytes with a last line saying so", () => {
  const a = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
  const d = unifiedLineDiff(a, [], {});
  equal(d.truncated, true);
  ok(new TextEncoder().encode(d.text).length <= MAX_DIFF_BYTES + 100);
  match(d.text, /\n-line \d+\n… diff truncated at 65536 bytes\n$/);
  equal(unifiedLineDiff(["x"], ["y"], { maxBytes: 1_000 }).truncated, false);
});

Deno.test("a long common run costs nothing: 100k equal lines around one change", () => {
  const a = Array.from({ length: 100_000 }, (_, i) => `l${i}`);
  const b = a.with(50_000, "changed");
  const t0 = performance.now();
  const d = unifiedLineDiff(a, b);
  ok(performance.now() - t0 < 2_000);
  match(d.text, /@@ -49998,7 \+49998,7 @@\n/);
});

Deno.test("past maxSteps Myers gives up and the middle is shown whole, on any arrangement", () => {
  // Long equal runs between edits: every round walks far along the diagonals.
  const a = Array.from({ length: 4_000 }, (_, i) => i % 40 === 0 ? `a${i}` : "same");
  const b = Array.from({ length: 4_000 }, (_, i) => i % 40 === 0 ? `b${i}` : "same");
  const full = sides(unifiedLineDiff(a, b, { context: 10_000 }).text);
  equal(full.edits, 200, "within the budget: the shortest script");
  const cut = unifiedLineDiff(a, b, { context: 10_000, maxSteps: 1_000 });
  const s = sides(cut.text);
  deepEqual([s.a, s.b], [a, b]);
  ok(s.edits > 200, "over the budget: correct but not the shortest");
  const t0 = performance.now();
  const big = Array.from({ length: 200_000 }, (_, i) => i % 3 ? "x" : `y${i}`);
  unifiedLineDiff(big, big.map((l, i) => i % 7 ? l : `z${i}`));
  ok(performance.now() - t0 < 5_000, "a worst case stays bounded by MAX_DIFF_STEPS");
});

Deno.test("many hunks, numbered in one pass: a change every 200 lines of 20k", () => {
  const a = Array.from({ length: 20_000 }, (_, i) => `l${i}`);
  const b = a.map((l, i) => i % 200 ? l : `c${i}`);
  const d = unifiedLineDiff(a, b, { maxBytes: 10_000_000 });
  equal(d.truncated, false);
  equal(d.text.split("\n").filter((l) => l.startsWith("@@")).length, 100);
  match(d.text, /\n@@ -19798,7 \+19798,7 @@\n l19797\n l19798\n l19799\n-l19800\n\+c19800\n/);
});
