import assert from "node:assert/strict";
import { resolveResourceType, RESOURCE_DESCRIPTORS, RESOURCE_TYPES } from "./registry.ts";

Deno.test("every type resolves by name, lower case and alias; aliases are unique", () => {
  const seen = new Map<string, string>();
  for (const t of RESOURCE_TYPES) {
    assert.equal(resolveResourceType(t), t);
    assert.equal(resolveResourceType(t.toLowerCase()), t);
    assert.equal(RESOURCE_DESCRIPTORS[t].type, t);
    for (const alias of RESOURCE_DESCRIPTORS[t].aliases) {
      assert.equal(alias, alias.toLowerCase());
      assert.ok(!seen.has(alias), `alias "${alias}" used by ${seen.get(alias)} and ${t}`);
      seen.set(alias, t);
      assert.equal(resolveResourceType(alias), t);
    }
  }
  assert.equal(resolveResourceType("nope"), undefined);
});
