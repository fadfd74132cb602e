import assert from "node:assert/strict";
import { collectFields, CONFIG_DOCS_URL, generateConfigDocs } from "./docs_gen.ts";

Deno.test("docs/config.md is up to date with the schema (run `deno task docs:config`)", async () => {
  const expected = await generateConfigDocs();
  const actual = await Deno.readTextFile(CONFIG_DOCS_URL);
  assert.ok(actual === expected, "docs/config.md is stale: run `deno task docs:config`");
});

Deno.test("every field is documented with a description and a type", () => {
  const fields = collectFields();
  assert.ok(fields.length > 60, `only ${fields.length} fields found`);
  const undocumented = fields.filter((f) => !f.description).map((f) => f.path);
  assert.deepEqual(undocumented, []);
  for (const f of fields) assert.ok(f.type && f.type !== "unknown", `${f.path}: ${f.type}`);
});

Deno.test("the reference lists nested paths with their defaults", () => {
  const byPath = new Map(collectFields().map((f) => [f.path, f]));
  assert.equal(byPath.get("machine.network.interfaces[].mtu")?.type, "integer (68..65535)");
  assert.equal(byPath.get("machine.services[].stop_grace_period")?.default, "10s");
  assert.equal(byPath.get("machine.services[].restart")?.default, "always");
  assert.equal(byPath.get("machine.hostname")?.required, true);
  assert.equal(byPath.get("machine.services[].health.exec.command")?.required, true);
});
