/**
 * The strict order of image versions the downgrade floor compares with
 * (docs/decisions.md, "The downgrade floor survives a reset"): a version is
 * `MAJOR.MINOR[.PATCH…]` (at least two dotted numbers, so a short commit hash
 * made only of digits is not taken for a huge version), optionally followed
 * by a pre-release after `-` or `~` that sorts BELOW its release
 * (`2.0.0~old` < `2.0.0-rc.1` < `2.0.0`; identifiers compared as semver
 * compares them), optionally followed by `+build` metadata that is ignored
 * for the order (`2.0.0+b7` ranks as `2.0.0`, so it is a replay of 2.0.0,
 * never an upgrade over it). Anything else (the imager's default, a commit
 * hash such as `deadbeef`) has no order. Pure.
 * @module
 */

const IDS = "[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*";
const VERSION = new RegExp(`^(\\d+(?:\\.\\d+)+)(?:[-~](${IDS}))?(?:\\+${IDS})?$`);

/** A version split for ordering. */
export interface OrderedVersion {
  /** The dotted numbers, without leading zeros. */
  readonly release: readonly string[];
  /** The pre-release identifiers; empty for a release. */
  readonly pre: readonly string[];
}

/** `v` split for ordering; undefined when it has no order. Pure. */
export function parseVersion(v: string): OrderedVersion | undefined {
  const m = VERSION.exec(v);
  if (!m) return undefined;
  return {
    release: m[1].split(".").map((n) => n.replace(/^0+(?=\d)/, "")),
    pre: m[2] ? m[2].split(".") : [],
  };
}

/** Two digit strings without leading zeros, compared as numbers of any size. */
function compareDigits(a: string, b: string): number {
  if (a.length !== b.length) return Math.sign(a.length - b.length);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One pre-release identifier: numeric ones numerically and below alphanumeric ones. */
function compareIdentifier(a: string, b: string): number {
  const na = /^\d+$/.test(a);
  const nb = /^\d+$/.test(b);
  if (na && nb) return compareDigits(a.replace(/^0+(?=\d)/, ""), b.replace(/^0+(?=\d)/, ""));
  if (na !== nb) return na ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePre(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return Math.sign(b.length - a.length);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = compareIdentifier(a[i], b[i]);
    if (d !== 0) return d;
  }
  return Math.sign(a.length - b.length);
}

/**
 * -1, 0 or 1 when both versions have an order (missing numbers count as 0:
 * `1.0` ranks as `1.0.0`); undefined when either has none. Pure.
 */
export function compareVersions(a: string, b: string): number | undefined {
  const x = parseVersion(a);
  const y = parseVersion(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
    const d = compareDigits(x.release[i] ?? "0", y.release[i] ?? "0");
    if (d !== 0) return d;
  }
  return comparePre(x.pre, y.pre);
}

/** Whether `v` has an order. Pure. */
export function isOrdered(v: string | undefined): v is string {
  return v !== undefined && parseVersion(v) !== undefined;
}

/** The highest of the ordered versions given; undefined when none is. Pure. */
export function highestVersion(...vs: (string | undefined)[]): string | undefined {
  let top: string | undefined;
  for (const v of vs) {
    if (isOrdered(v) && (top === undefined || compareVersions(v, top)! > 0)) top = v;
  }
  return top;
}
