import assert from "node:assert/strict";
import { nodeIdKey } from "./node_id_key.ts";

const UUID = "4c4c4544-0042-3510-8052-b4c04f384d32";

Deno.test("nodeid key: 32 bytes, stable, different per volume and per board", async () => {
  const a = await nodeIdKey(UUID, "STATE");
  assert.equal(a.length, 32);
  assert.deepEqual(await nodeIdKey(UUID.toUpperCase(), "STATE"), a); // case does not matter
  assert.notDeepEqual(await nodeIdKey(UUID, "EPHEMERAL"), a);
  assert.notDeepEqual(await nodeIdKey(UUID.replace("4c4c", "4c4d"), "STATE"), a);
});

Deno.test("nodeid key: a missing or placeholder UUID is refused, not used", async () => {
  await assert.rejects(nodeIdKey("not-a-uuid", "STATE"), RangeError);
  await assert.rejects(nodeIdKey("00000000-0000-0000-0000-000000000000", "STATE"), /placeholder/);
  await assert.rejects(nodeIdKey("03000200-0400-0500-0006-000700080009", "STATE"), /placeholder/);
});
