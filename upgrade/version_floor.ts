/**
 * The downgrade floor: a bundle whose version is below the floor in force
 * (the higher of the floor recorded on STATE, raised each time a slot is
 * blessed, and the booted image's version) is refused unless the admin
 * forces it (logged). Versions compare as dotted
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

/** Whether `v` is a dotted version (one with an order). Pure. */
export function isOrdered(v: string | undefined): v is string {
  return v !== undefined && compareVersions(v, v) === 0;
}

/**
 * The floor in force: the higher of the floor recorded on STATE and the
 * booted image's version, counting only dotted versions; `source` says which
 * one it is. Pure.
 */
export function effectiveFloor(
  stored: string | undefined,
  running: string | undefined,
): { floor?: string; source: "state" | "running" | "none" } {
  const s = isOrdered(stored) ? stored : undefined;
  const r = isOrdered(running) ? running : undefined;
  if (s && (!r || compareVersions(s, r)! >= 0)) return { floor: s, source: "state" };
  if (r) return { floor: r, source: "running" };
  return { source: "none" };
}

/**
 * The floor after `blessed` was blessed: it only rises, and only to a dotted
 * version (a commit-hash version leaves it where it is). Pure.
 */
export function raiseFloor(
  stored: string | undefined,
  blessed: string | undefined,
): string | undefined {
  if (!isOrdered(blessed)) return stored;
  if (!isOrdered(stored) || compareVersions(blessed, stored) === 1) return blessed;
  return stored;
}

/** The downgrade check's verdict on one bundle. */
export type FloorVerdict =
  | { kind: "allowed"; floor?: string }
  | { kind: "forced"; floor: string; message: string }
  | { kind: "refused"; floor: string; message: string };

/**
 * Whether a bundle of version `bundle` may be installed: refused when it is
 * below the floor in force ({@link effectiveFloor}), unless `force` (then
 * `forced`, which the caller logs). A bundle without an order is allowed.
 * Pure.
 */
export function floorDecision(o: {
  stored?: string;
  running?: string;
  bundle: string;
  force?: boolean;
}): FloorVerdict {
  const { floor, source } = effectiveFloor(o.stored, o.running);
  if (floor === undefined || compareVersions(o.bundle, floor) !== -1) {
    return { kind: "allowed", floor };
  }
  const message = source === "running"
    ? `version ${o.bundle} is below the running ${floor}, the downgrade floor`
    : `version ${o.bundle} is below the downgrade floor ${floor} recorded on STATE ` +
      `(raised when ${floor} was blessed)`;
  return o.force
    ? { kind: "forced", floor, message: `${message}; forced` }
    : { kind: "refused", floor, message: `${message}; --force to downgrade` };
}
