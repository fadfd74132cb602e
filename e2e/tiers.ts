/**
 * The QEMU tier comes in two lengths. `deno task e2e` (what CI runs) boots
 * every case once and runs a shorter version of the long matrices;
 * `deno task e2e:long` (MACHINED_E2E_LONG=1) runs them in full: every power-cut
 * point of an upgrade, the arm64 upgrade and rollback, a fleet of three. The
 * short versions keep one case of each kind, so a regression in any of them
 * still fails CI; the long tier is run before a release and when that code
 * changes. docs/usage.md lists what each tier covers; docs/decisions.md, "CI
 * under 45 minutes", says why.
 */

/** Whether the long QEMU tier runs (`deno task e2e:long`). */
export const LONG_TIER = Deno.env.get("MACHINED_E2E_LONG") === "1";

/** What an ignored step of the short tier says, so `.ci/expected-skips` can name it once. */
export const LONG_TIER_ONLY = "long tier: deno task e2e:long";

/** `long` in the long tier, `short` otherwise. */
export function byTier<T>(long: T, short: T): T {
  return LONG_TIER ? long : short;
}
