import assert from "node:assert/strict";
import { editDistance, suggest } from "./suggest.ts";

Deno.test("editDistance counts an adjacent swap as one edit", () => {
  assert.deepEqual(editDistance("hostname", "hostname"), 0);
  assert.deepEqual(editDistance("hostnme", "hostname"), 1);
  assert.deepEqual(editDistance("hsotname", "hostname"), 1);
  assert.deepEqual(editDistance("", "abc"), 3);
  assert.deepEqual(editDistance("kitten", "sitting"), 3);
});

Deno.test("suggest finds typos, camelCase and kebab-case spellings", () => {
  const keys = ["hostname", "domainname", "install", "network", "depends_on", "mtu"];
  assert.deepEqual(suggest("hostnme", keys), "hostname");
  assert.deepEqual(suggest("dependsOn", keys), "depends_on");
  assert.deepEqual(suggest("depends-on", keys), "depends_on");
  assert.deepEqual(suggest("MTU", keys), "mtu");
  assert.deepEqual(suggest("netwrok", keys), "network");
  assert.deepEqual(suggest("zzz", keys), undefined);
  assert.deepEqual(suggest("mtx", keys), "mtu");
  assert.deepEqual(suggest("xyz", ["mtu"]), undefined);
});
