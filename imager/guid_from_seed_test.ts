import assert from "node:assert/strict";
import { bytesToGuid, guidToBytes } from "../platform/block/mod.ts";
import { guidFromSeed } from "./guid_from_seed.ts";

Deno.test("guidFromSeed is stable, version-4 shaped and a GUID platform/block encodes", async () => {
  const a = await guidFromSeed("machined-disk");
  assert.deepEqual(a, await guidFromSeed("machined-disk"));
  assert(a !== await guidFromSeed("other"));
  assert.deepEqual(a[14], "4");
  assert.match(a[19], /[89ab]/);
  assert.equal(bytesToGuid(guidToBytes(a)), a);
});
