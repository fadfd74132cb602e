/**
 * The pure decision of a CA rotation: given what a node's config says about
 * its CAs (`machine.ca.crt` and `machine.ca.accepted`), which step it needs
 * next. The steps, in order (docs/api.md, "Rotating the CA"):
 *
 * 1. `accept`: the new CA joins `accepted`; clients of either CA get in, the
 *    server certificate is still the old CA's.
 * 2. `switch`: `crt`/`key` become the new CA, the old one moves to
 *    `accepted`; the server certificate is re-issued by the new CA.
 * 3. `finish`: the old CA leaves `accepted`; old client configs are refused.
 *
 * A step already made is never made again, so an interrupted rotation resumes
 * where each node stands.
 *
 * @module
 */

/** What a node's config in force says about its CAs (certificates as PEM). */
export interface ObservedCa {
  readonly crt: string | undefined;
  readonly accepted: readonly string[];
}

/** The steps of a rotation, in order. */
export const ROTATION_STEPS = ["accept", "switch", "finish"] as const;
/** One step. */
export type RotationStep = typeof ROTATION_STEPS[number];

/** Where a node stands: the step it needs next, `done`, or a CA this rotation does not know. */
export type NodeStand =
  | { readonly next: RotationStep }
  | { readonly next: "done" }
  | { readonly next: "foreign"; readonly reason: string };

/** The old and new CA certificates of a rotation (PEM). */
export interface RotationCas {
  readonly oldCrt: string;
  readonly newCrt: string;
}

const same = (a: string | undefined, b: string) => a !== undefined && a.trim() === b.trim();

/**
 * Pure: the next step of one node. A node whose CA is neither the old nor
 * the new one is `foreign` (another rotation, or the wrong node): touching it
 * could lock its operators out, so the rotation stops there.
 */
export function standOf(observed: ObservedCa, cas: RotationCas): NodeStand {
  const accepts = (pem: string) => observed.accepted.some((a) => same(a, pem));
  if (same(observed.crt, cas.oldCrt)) {
    return accepts(cas.newCrt) ? { next: "switch" } : { next: "accept" };
  }
  if (same(observed.crt, cas.newCrt)) {
    return accepts(cas.oldCrt) ? { next: "finish" } : { next: "done" };
  }
  return {
    next: "foreign",
    reason: observed.crt === undefined
      ? "its config carries no machine.ca"
      : "its machine.ca is neither the rotation's old CA nor its new one",
  };
}

/**
 * Pure: the `machine.ca` a node gets for `step` (certificates and the key
 * of the CA it is to serve with). `accepted` keeps any other CA the node
 * already accepted, in order, without duplicates.
 */
export function caSectionFor(
  step: RotationStep,
  observed: ObservedCa,
  cas: RotationCas & { readonly oldKey?: string; readonly newKey: string },
): { crt: string; key: string | undefined; accepted: string[] } {
  const others = observed.accepted.filter((a) => !same(a, cas.oldCrt) && !same(a, cas.newCrt));
  switch (step) {
    case "accept":
      return { crt: cas.oldCrt, key: cas.oldKey, accepted: [...others, cas.newCrt] };
    case "switch":
      return { crt: cas.newCrt, key: cas.newKey, accepted: [...others, cas.oldCrt] };
    case "finish":
      return { crt: cas.newCrt, key: cas.newKey, accepted: others };
  }
}

/**
 * Pure: whether a rotation over `stands` may run `step` now. `switch` waits
 * until no node needs `accept` (a client config trusting both CAs exists only
 * then), and `finish` until every node has switched: old clients keep working
 * until the whole fleet serves the new CA.
 */
export function mayRun(step: RotationStep, stands: readonly NodeStand[]): boolean {
  const order = (s: NodeStand) =>
    s.next === "done" ? ROTATION_STEPS.length : ROTATION_STEPS.indexOf(s.next as RotationStep);
  const needed = ROTATION_STEPS.indexOf(step);
  return stands.every((s) => s.next !== "foreign" && order(s) >= needed);
}
