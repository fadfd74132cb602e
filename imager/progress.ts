/**
 * One line per build step with its duration, so a slow step (compression,
 * a first kernel download) is visible while the image builds.
 */

/** Runs named steps and reports each one's time. */
export interface Progress {
  /** Run `fn` as step `name`; `detail` turns its result into the rest of the line. */
  step<T>(name: string, fn: () => Promise<T>, detail?: (r: T) => string): Promise<T>;
  /** Print a free-form line. */
  note(line: string): void;
  /** Seconds since the progress started. */
  elapsed(): number;
}

/**
 * A {@link Progress} writing to `write` (stderr by default, so stdout stays
 * clean for callers that parse it). A step's line is started before it runs
 * and completed with its duration when it ends.
 */
export function createProgress(
  write: (text: string) => void = (t) => Deno.stderr.writeSync(new TextEncoder().encode(t)),
): Progress {
  const start = performance.now();
  return {
    async step(name, fn, detail) {
      write(`[imager] ${name} ...`);
      const t = performance.now();
      try {
        const r = await fn();
        const secs = ((performance.now() - t) / 1000).toFixed(1);
        write(` ${secs}s${detail ? `  ${detail(r)}` : ""}\n`);
        return r;
      } catch (e) {
        write(" failed\n");
        throw e;
      }
    },
    note(line) {
      write(`[imager] ${line}\n`);
    },
    elapsed() {
      return (performance.now() - start) / 1000;
    },
  };
}

/** Human-readable byte count (MiB with one decimal, or bytes). */
export function formatBytes(n: number | bigint): string {
  const v = Number(n);
  if (v >= 1024 * 1024 * 1024) return `${(v / 1024 ** 3).toFixed(2)} GiB`;
  if (v >= 1024 * 1024) return `${(v / 1024 ** 2).toFixed(1)} MiB`;
  if (v >= 1024) return `${(v / 1024).toFixed(1)} KiB`;
  return `${v} B`;
}

/**
 * Parse a size such as "2GiB", "512MiB", "1G" or "1048576".
 * @throws RangeError on an unknown unit or a non-positive size.
 */
export function parseSize(text: string): bigint {
  const m = /^(\d+)\s*([KMGT]?)(i?B)?$/i.exec(text.trim());
  if (!m) throw new RangeError(`Cannot parse size "${text}" (use e.g. 2GiB, 512MiB)`);
  const unit = { "": 0n, K: 10n, M: 20n, G: 30n, T: 40n }[m[2].toUpperCase()]!;
  const v = BigInt(m[1]) << unit;
  if (v <= 0n) throw new RangeError(`Size "${text}" must be positive`);
  return v;
}
