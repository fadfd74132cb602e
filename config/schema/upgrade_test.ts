import assert from "node:assert/strict";
import { parseMachineConfig } from "../parse_machine_config.ts";
import { generateSigningKey } from "../../node/upgrade/signing_key.ts";

const config = (keys: string) =>
  `version: v1alpha1\nmachine:\n  hostname: node-1\n  upgrade:\n    trusted_keys:\n${keys}`;

Deno.test("machine.upgrade.trusted_keys takes SPKI PEM public keys, refuses anything else with its line", async () => {
  const { publicPem, privatePem } = await generateSigningKey();
  const block = (pem: string) =>
    `      - |\n${pem.trim().split("\n").map((l) => `        ${l}`).join("\n")}\n`;
  const ok = parseMachineConfig(config(block(publicPem)), "t.yaml");
  assert.ok(ok.ok, !ok.ok ? ok.errors.map((e) => e.format()).join("\n") : "");
  assert.equal(ok.config.machine.upgrade.trusted_keys[0].trim(), publicPem.trim());
  const bad = parseMachineConfig(config(block(privatePem)), "t.yaml");
  assert.ok(!bad.ok);
  assert.match(bad.errors[0].format(), /t\.yaml:6:\d+.*SPKI PEM/);
});
