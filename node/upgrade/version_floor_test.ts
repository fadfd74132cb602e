import assert from "node:assert/strict";
import { compareVersions, entryVersion, isDowngrade } from "./version_floor.ts";

Deno.test("versions compare as dotted numbers; anything else has no order", () => {
  assert.equal(compareVersions("2.10.0", "2.9.1"), 1);
  assert.equal(compareVersions("1.0", "1.0.0-rc1"), 0);
  assert.equal(compareVersions("1.2.3", "1.3"), -1);
  assert.equal(compareVersions("abc123", "1.0"), undefined);
  assert.ok(isDowngrade("1.0.0", "2.0.0"));
  assert.ok(!isDowngrade("2.0.0", "2.0.0"));
  assert.ok(!isDowngrade("e8f5269abcde", "2.0.0"), "a commit hash is not ordered");
  assert.ok(!isDowngrade("1.0.0", undefined));
  assert.equal(entryVersion("title machined 2.0.0-e2e (slot B)\nsort-key machined\n"), "2.0.0-e2e");
  assert.equal(entryVersion("title machined (slot A)\n"), undefined);
});
