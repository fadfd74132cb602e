/**
 * "Did you mean" suggestions for misspelt keys and values, by optimal string
 * alignment distance (Damerau-Levenshtein with adjacent transpositions).
 *
 * @module
 */

/**
 * Edit distance counting insertions, deletions, substitutions and swaps of two
 * adjacent characters, each as one edit.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, () => new Array(cols).fill(0));
  for (let i = 0; i < rows; i++) d[i][0] = i;
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.length][b.length];
}

/** Lowercases and turns camelCase and kebab-case into snake_case. */
function normalise(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").replace(/-/g, "_").toLowerCase();
}

/**
 * The candidate closest to `input`, if it is close enough to be a likely typo:
 * at most one edit for short words, two for words of five or more characters,
 * three for words of ten or more. `dependsOn`, `Depends-On` and `depends_on`
 * count as the same word, so camelCase habits from other tools are caught.
 * Ties go to the alphabetically first candidate so suggestions are stable.
 */
export function suggest(input: string, candidates: Iterable<string>): string | undefined {
  const wanted = normalise(input);
  const budget = wanted.length >= 10 ? 3 : wanted.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const other = normalise(candidate);
    // The distance is at least the difference in length: skip what cannot win.
    if (Math.abs(other.length - wanted.length) > Math.min(budget, bestDistance)) continue;
    const d = editDistance(wanted, other);
    if (d < bestDistance || (d === bestDistance && best !== undefined && candidate < best)) {
      [best, bestDistance] = [candidate, d];
    }
  }
  return bestDistance <= budget ? best : undefined;
}
