/**
 * The downgrade floor: a bundle is refused unless the admin forces it
 * (logged) when its version is below the floor in force (the highest of the
 * floor recorded on the ESP, the one recorded on STATE, both raised when a
 * slot is blessed, and the booted image's version), equal to it (a replay:
 * writing it again would overwrite the fallback slot), or without an order
 * at all (a commit hash: nothing shows it is not older). With no floor (no
 * ordered version ever ran or was blessed) nothing is refused, so dev images
 * versioned by commit hash keep upgrading. The order is version_order.ts's.
 * Pure.
 */
import { compareVersions, highestVersion, isOrdered } from "./version_order.ts";

export { compareVersions, isOrdered } from "./version_order.ts";

/** Whether installing `bundle` over a node running `running` is a downgrade. Pure. */
export function isDowngrade(bundle: string, running: string | undefined): boolean {
  return running !== undefined && compareVersions(bundle, running) === -1;
}

/** The image version an entry's title names (`title machined 2.0.0 (slot B)`). Pure. */
export function entryVersion(text: string): string | undefined {
  return /^title machined (\S+) \(slot [AB]\)$/m.exec(text)?.[1];
}

/** Where a recorded floor is kept: the ESP's floor file, or STATE's upgrade record. */
export type RecordedSource = "esp" | "state";

/** Where the floor in force comes from. */
export type FloorOrigin = RecordedSource | "running" | "none";

/**
 * The recorded floor: the higher of the ESP's and STATE's (a node upgraded
 * from a version that kept it on STATE only keeps it); the ESP's when both
 * are equal, since that one survives a reset. Pure.
 */
export function recordedFloor(
  esp: string | undefined,
  state: string | undefined,
): { floor?: string; source: RecordedSource | "none" } {
  const top = highestVersion(esp, state);
  if (top === undefined) return { source: "none" };
  return {
    floor: top,
    source: isOrdered(esp) && compareVersions(esp, top) === 0 ? "esp" : "state",
  };
}

/**
 * The floor in force: the higher of the recorded floor and the booted
 * image's version, counting only ordered versions; `source` says which one
 * it is (the recorded one when they are equal). Pure.
 */
export function effectiveFloor(
  stored: string | undefined,
  running: string | undefined,
  storedSource: RecordedSource = "state",
): { floor?: string; source: FloorOrigin } {
  const s = isOrdered(stored) ? stored : undefined;
  const r = isOrdered(running) ? running : undefined;
  if (s && (!r || compareVersions(s, r)! >= 0)) return { floor: s, source: storedSource };
  if (r) return { floor: r, source: "running" };
  return { source: "none" };
}

/**
 * The floor after `blessed` was blessed: it only rises, and only to an
 * ordered version (a commit-hash version leaves it where it is). Pure.
 */
export function raiseFloor(
  stored: string | undefined,
  blessed: string | undefined,
): string | undefined {
  if (!isOrdered(blessed)) return stored;
  if (!isOrdered(stored) || compareVersions(blessed, stored) === 1) return blessed;
  return stored;
}

/** Why the floor refuses a bundle (each a SlotError reason, bundle/errors.ts). */
export type FloorReason = "downgrade" | "replay" | "unordered";

/** The downgrade check's verdict on one bundle. */
export type FloorVerdict =
  | { kind: "allowed"; floor?: string }
  | { kind: "forced"; reason: FloorReason; floor: string; message: string }
  | { kind: "refused"; reason: FloorReason; floor: string; message: string };

const FORCE = "--force to install it anyway";

/** Why `bundle` may not go over `floor` without force; undefined when it may. Pure. */
function objection(
  bundle: string,
  floor: string,
  source: FloorOrigin,
): { reason: FloorReason; message: string } | undefined {
  const floorIs = source === "running"
    ? `the running ${floor}, the downgrade floor`
    : `the downgrade floor ${floor} (recorded on ${source === "esp" ? "the ESP" : "STATE"} ` +
      `when ${floor} was blessed)`;
  const order = compareVersions(bundle, floor);
  if (order === undefined) {
    return {
      reason: "unordered",
      message: `version ${bundle} has no order (not a dotted version such as 2.1.0), ` +
        `so nothing shows it is not below ${floorIs}`,
    };
  }
  if (order < 0) return { reason: "downgrade", message: `version ${bundle} is below ${floorIs}` };
  if (order === 0) {
    return {
      reason: "replay",
      message: `version ${bundle} ranks as ${floorIs}: installing it again would overwrite ` +
        `the fallback slot`,
    };
  }
  return undefined;
}

/**
 * Whether a bundle of version `bundle` may be installed: refused when it is
 * below, equal to, or not comparable with the floor in force
 * ({@link effectiveFloor}), unless `force` (then `forced`, which the caller
 * logs as a forced downgrade). Anything is allowed when there is no floor.
 * Pure.
 */
export function floorDecision(o: {
  stored?: string;
  storedSource?: RecordedSource;
  running?: string;
  bundle: string;
  force?: boolean;
}): FloorVerdict {
  const { floor, source } = effectiveFloor(o.stored, o.running, o.storedSource);
  if (floor === undefined) return { kind: "allowed" };
  const no = objection(o.bundle, floor, source);
  if (!no) return { kind: "allowed", floor };
  return o.force
    ? { kind: "forced", reason: no.reason, floor, message: `${no.message}; forced` }
    : { kind: "refused", reason: no.reason, floor, message: `${no.message}; ${FORCE}` };
}
