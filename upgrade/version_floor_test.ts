import assert from "node:assert/strict";
import {
  compareVersions,
  effectiveFloor,
  entryVersion,
  floorDecision,
  isDowngrade,
  raiseFloor,
} from "./version_floor.ts";

Deno.test("versions compare as dotted numbers; anything else has no order", () => {
  assert.equal(compareVersions("2.10.0", "2.9.1"), 1);
  assert.equal(compareVersions("1.0", "1.0.0-rc1"), 1, "a pre-release sorts below its release");
  assert.equal(compareVersions("2.0.0~old", "2.0.0"), -1, "the issue's example");
  assert.equal(compareVersions("2.0.0-rc.1", "2.0.0"), -1);
  assert.equal(compareVersions("2.0.0-rc.2", "2.0.0-rc.10"), -1, "numeric identifiers numerically");
  assert.equal(compareVersions("2.0.0-1", "2.0.0-alpha"), -1, "numeric below alphanumeric");
  assert.equal(compareVersions("2.0.0-rc", "2.0.0-rc.1"), -1, "a shorter set sorts first");
  assert.equal(compareVersions("2.0.0+b7", "2.0.0"), 0, "+build is ignored for the order");
  assert.equal(compareVersions("10.0.0", "9.99.99"), 1);
  assert.equal(compareVersions("deadbeef", "1.0.0"), undefined, "the issue's commit hash");
  assert.equal(compareVersions("1234567", "1.0.0"), undefined, "a digits-only hash has no order");
  assert.equal(compareVersions("1.2.3", "1.3"), -1);
  assert.equal(compareVersions("abc123", "1.0"), undefined);
  assert.ok(isDowngrade("1.0.0", "2.0.0"));
  assert.ok(!isDowngrade("2.0.0", "2.0.0"));
  assert.ok(!isDowngrade("e8f5269abcde", "2.0.0"), "a commit hash is not ordered");
  assert.ok(!isDowngrade("1.0.0", undefined));
  assert.equal(entryVersion("title machined 2.0.0-e2e (slot B)\nsort-key machined\n"), "2.0.0-e2e");
  assert.equal(entryVersion("title machined (slot A)\n"), undefined);
});

Deno.test("the floor in force is the higher of STATE's and the running version's", () => {
  assert.deepEqual(effectiveFloor(undefined, undefined), { source: "none" });
  assert.deepEqual(effectiveFloor(undefined, "1.0.0"), { floor: "1.0.0", source: "running" });
  assert.deepEqual(effectiveFloor("2.0.0", "1.0.0"), { floor: "2.0.0", source: "state" });
  assert.deepEqual(effectiveFloor("1.0.0", "2.0.0"), { floor: "2.0.0", source: "running" });
  assert.deepEqual(effectiveFloor("2.0.0", "2.0.0"), { floor: "2.0.0", source: "state" });
  assert.deepEqual(effectiveFloor("2.0.0", "e8f5269"), { floor: "2.0.0", source: "state" });
  assert.deepEqual(effectiveFloor("junk", "e8f5269"), { source: "none" });
});

Deno.test("the floor only rises, and only to a dotted version", () => {
  assert.equal(raiseFloor(undefined, "1.0.0"), "1.0.0");
  assert.equal(raiseFloor("1.0.0", "2.0.0"), "2.0.0");
  assert.equal(raiseFloor("2.0.0", "1.0.0"), "2.0.0", "a forced downgrade blessed keeps it");
  assert.equal(raiseFloor("2.0.0", "e8f5269"), "2.0.0");
  assert.equal(raiseFloor(undefined, "e8f5269"), undefined);
  assert.equal(raiseFloor("junk", "1.0.0"), "1.0.0");
});

Deno.test("floorDecision: (floor, bundle, force) → allowed, refused or forced", () => {
  const table: [string | undefined, string | undefined, string, boolean, string][] = [
    // stored, running, bundle, force → verdict
    [undefined, undefined, "0.1.0", false, "allowed"],
    [undefined, "1.0.0", "1.0.0", false, "refused"], // a replay of the running version
    [undefined, "1.0.0", "1.0.0", true, "forced"],
    [undefined, "1.0.0", "1.0.1", false, "allowed"],
    [undefined, undefined, "deadbeef", false, "allowed"], // no floor: dev images keep upgrading
    [undefined, "e8f5269", "deadbeef", false, "allowed"],
    ["2.0.0", undefined, "deadbeef", false, "refused"], // the hole
    ["2.0.0", undefined, "deadbeef", true, "forced"],
    ["2.0.0", "1.0.0", "2.0.0~old", false, "refused"], // the hole: below 2.0.0
    ["2.0.0", "2.0.0", "2.0.0", false, "refused"], // replay after the bless
    ["2.0.0", "1.0.0", "2.0.0+b7", false, "refused"], // ranks as 2.0.0: a replay
    ["2.0.0", "1.0.0", "2.0.1-rc.1", false, "allowed"],
    [undefined, "1.0.0", "0.9.0", false, "refused"],
    [undefined, "1.0.0", "0.9.0", true, "forced"],
    ["2.0.0", "1.0.0", "1.5.0", false, "refused"], // after a rollback to 1.0.0
    ["2.0.0", "1.0.0", "1.5.0", true, "forced"],
    ["2.0.0", "1.0.0", "2.0.0", false, "refused"], // a replay of the blessed version
    ["2.0.0", "1.0.0", "3.0.0", false, "allowed"],
    ["2.0.0", "1.0.0", "e8f5269", false, "refused"], // no order while a floor is in force
    ["2.0.0-e2e", "1.0.0-e2e", "1.5.0-e2e", false, "refused"],
  ];
  for (const [stored, running, bundle, force, want] of table) {
    const v = floorDecision({ stored, running, bundle, force });
    assert.equal(v.kind, want, JSON.stringify({ stored, running, bundle, force }));
  }
  const state = floorDecision({ stored: "2.0.0", running: "1.0.0", bundle: "1.5.0" });
  assert.ok(state.kind === "refused");
  assert.match(state.message, /1\.5\.0 is below the downgrade floor 2\.0\.0 \(recorded on STATE/);
  assert.match(state.message, /--force/);
  const reasons = [["deadbeef", "unordered"], ["2.0.0~old", "downgrade"], ["2.0.0", "replay"]];
  for (const [bundle, reason] of reasons) {
    const v = floorDecision({ stored: "2.0.0", storedSource: "esp", bundle });
    assert.ok(v.kind === "refused" && v.reason === reason, JSON.stringify(v));
    assert.match(v.message, /recorded on the ESP.*--force to install it anyway$/);
  }
  const running = floorDecision({ running: "1.0.0", bundle: "0.9.0" });
  assert.ok(running.kind === "refused");
  assert.match(running.message, /0\.9\.0 is below the running 1\.0\.0/);
});
