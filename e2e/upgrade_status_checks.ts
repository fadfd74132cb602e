/**
 * UpgradeStatus checks of the QEMU upgrade test (e2e/node_upgrade_test.ts),
 * each through `machinectl get upgradestatus -o json`, kept here so that
 * test's steps stay one line each.
 */
import assert from "node:assert/strict";
import type { UpgradeStatusSpec } from "../resources/mod.ts";
import { machinectl, parseDocs } from "./helpers.ts";

/** The node's UpgradeStatus; retried for up to `ms` until `ready` holds (the bless is async). */
export async function upgradeStatus(
  config: string,
  port: number,
  ready: (s: UpgradeStatusSpec) => boolean = () => true,
  ms = 60_000,
): Promise<UpgradeStatusSpec> {
  const end = performance.now() + ms;
  for (;;) {
    const r = await machinectl(config, port, "get", "upgradestatus", "-o", "json");
    const spec = r.code === 0
      ? parseDocs(r.out)[0]?.spec as unknown as UpgradeStatusSpec | undefined
      : undefined;
    if (spec && (ready(spec) || performance.now() > end)) return spec;
    if (performance.now() > end) throw new Error(`get upgradestatus: ${r.code} ${r.out}${r.err}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const slot = (s: UpgradeStatusSpec, name: "A" | "B") => s.slots.find((x) => x.slot === name)!;

/** After the upgrade to `y`: booted B blessed at `y`, A still blessed at `x`, the floor `y`, last upgraded. */
export async function assertUpgraded(config: string, port: number, x: string, y: string) {
  const s = await upgradeStatus(config, port, (s) => s.last.outcome === "upgraded");
  assert.equal(s.booted, "B", JSON.stringify(s));
  assert.deepEqual([slot(s, "B").state, slot(s, "B").version, slot(s, "B").booted], [
    "blessed",
    y,
    true,
  ]);
  assert.deepEqual([slot(s, "A").state, slot(s, "A").version], ["blessed", x]);
  assert.deepEqual([s.floor, s.storedFloor, s.floorSource], [y, y, "esp"], "floor on the ESP");
  assert.deepEqual([s.last.outcome, s.last.version, s.last.slot], ["upgraded", y, "B"]);
}

/** After the rollback to A: booted A, the floor still `y` (from the ESP), last rolled back by hand. */
export async function assertRolledBack(config: string, port: number, y: string) {
  const s = await upgradeStatus(config, port, (s) => s.booted === "A");
  assert.equal(s.booted, "A", JSON.stringify(s));
  assert.deepEqual([s.floor, s.floorSource], [y, "esp"], "a rollback keeps the floor");
  assert.equal(s.last.outcome, "rolled-back");
  assert.match(s.last.reason, /^rollback by /);
}

/**
 * After a bundle whose kernel panicked: the trial slot bad (+0), `booted`
 * booted, the last outcome a rollback by the loader.
 */
export async function assertFellBack(config: string, port: number, booted: "A" | "B") {
  const trial = booted === "A" ? "B" : "A";
  const s = await upgradeStatus(config, port);
  assert.deepEqual([s.booted, slot(s, trial).state], [booted, "bad"], JSON.stringify(s));
  assert.equal(s.last.outcome, "rolled-back");
  assert.match(s.last.reason, new RegExp(`slot ${trial} used its boot tries`));
}

/**
 * A bundle of `version` (signed by a trusted key), above the running image's
 * but below the floor, is refused with FailedPrecondition and shown as
 * refused; the slots do not change.
 */
export async function assertBelowFloorRefused(
  config: string,
  port: number,
  bundle: string,
  version: string,
) {
  const before = (await upgradeStatus(config, port)).slots;
  const r = await machinectl(config, port, "upgrade", "-f", bundle, "--wait=false");
  assert.equal(r.code, 1, r.out + r.err);
  assert.match(r.err, /FailedPrecondition|failed.precondition|downgrade/i);
  assert.match(r.err, /below the downgrade floor/);
  const s = await upgradeStatus(config, port, (s) => s.last.outcome === "refused");
  assert.deepEqual([s.last.outcome, s.last.version], ["refused", version]);
  assert.deepEqual(s.slots, before, "nothing changed on the ESP");
}
