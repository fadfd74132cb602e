/** Sparklines: a series of shares (0..1) drawn with the eight Unicode block characters. */

const BLOCKS = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/**
 * The last `width` values as one character each, newest on the right, padded
 * on the left with spaces while the history is short. Values are clamped to
 * 0..1 so a bad reading cannot break the line's width.
 */
export function sparkline(values: readonly number[], width: number): string {
  if (width <= 0) return "";
  const shown = values.slice(-width).map((v) => {
    const x = Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 0;
    return BLOCKS[Math.min(BLOCKS.length - 1, Math.floor(x * BLOCKS.length))];
  });
  return " ".repeat(width - shown.length) + shown.join("");
}
