import assert from "node:assert/strict";
import { defaultDevConfig, parseMachineConfig } from "../config/mod.ts";
import { configWithSeq, KNOB } from "./soak_node.ts";

Deno.test("configWithSeq: the dev config with the soak's sysctl set, still a valid config", () => {
  const yaml = configWithSeq(defaultDevConfig("dev"), 42);
  const r = parseMachineConfig(yaml, "soak");
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(String(r.config.machine.sysctls[KNOB]), "42");
  assert.throws(() => configWithSeq("version: v1alpha1\n", 1), /no one-line `sysctls:`/);
});

Deno.test("configWithSeq: `hostname` also renames the node, still a valid config", () => {
  const yaml = configWithSeq(defaultDevConfig("dev"), 7, "hostname");
  const r = parseMachineConfig(yaml, "soak");
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.config.machine.hostname, "soak-7");
  assert.equal(String(r.config.machine.sysctls[KNOB]), "7");
  assert.equal(parseMachineConfig(configWithSeq(defaultDevConfig("dev"), 7), "s").ok, true);
});
