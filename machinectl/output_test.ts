import assert from "node:assert/strict";
import { parse } from "yaml";
import { Store } from "../runtime/mod.ts";
import type { ResourceSpecs } from "../resources/mod.ts";
import { alignTable, formatResources } from "./output.ts";

function sample() {
  const s = new Store<ResourceSpecs>();
  return s.create({
    type: "MachineStatus",
    namespace: "runtime",
    id: "machine",
    owner: "t",
    spec: {
      stage: "running",
      ready: true,
      unmetConditions: [],
      pid1: true,
      mode: "node",
    },
  });
}

Deno.test("tables are aligned with the type's columns", () => {
  const out = formatResources("MachineStatus", [sample()], "table").split("\n");
  assert.match(out[0], /^NAMESPACE\s+TYPE\s+ID\s+VERSION\s+STAGE\s+READY\s+UNMET$/);
  assert.match(out[1], /^runtime\s+MachineStatus\s+machine\s+1\s+running\s+true$/);
  assert.equal(out[0].indexOf("STAGE"), out[1].indexOf("running"));
  assert.equal(alignTable([["a", "bb"], ["ccc", "d"]]), "a     bb\nccc   d");
});

Deno.test("json and yaml output have a stable metadata/spec shape", () => {
  const r = sample();
  const json = JSON.parse(formatResources("MachineStatus", [r], "json"));
  assert.deepEqual(Object.keys(json), ["metadata", "spec"]);
  assert.equal(json.metadata.type, "MachineStatus");
  assert.equal(json.spec.stage, "running");
  const yaml = parse(formatResources("MachineStatus", [r], "yaml"));
  assert.deepEqual(yaml, json);
});
