/**
 * The downgrade floor: a bundle whose version is below the booted image's is
 * refused unless the admin forces it (logged). Versions compare as dotted
 * numbers (`2.10.0` > `2.9.1`; a suffix after `-`, `+` or `~` is ignored);
 * when either is not one (the imager's default version is a commit hash)
 * there is no order and nothing is refused. Pure.
 */

const DOTTED = /^(\d+(?:\.\d+)*)(?:[-+~].*)?$/;

/** -1, 0 or 1 when both are dotted versions; undefined when either is not. Pure. */
export function compareVersions(a: string, b: string): number | undefined {
  const x = DOTTED.exec(a)?.[1]?.split(".").map(Number);
  const y = DOTTED.exec(b)?.[1]?.split(".").map(Number);
  if (!x || !y) return undefined;
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** Whether installing `bundle` over a node running `running` is a downgrade. Pure. */
export function isDowngrade(bundle: string, running: string | undefined): boolean {
  return running !== undefined && compareVersions(bundle, running) === -1;
}

/** The image version an entry's title names (`title machined 2.0.0 (slot B)`). Pure. */
export function entryVersion(text: string): string | undefined {
  return /^title machined (\S+) \(slot [AB]\)$/m.exec(text)?.[1];
}
