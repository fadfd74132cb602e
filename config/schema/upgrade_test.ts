import assert from "node:assert/strict";
import { parseMachineConfig } from "../parse_machine_config.ts";
import { generateSigningKey } from "../../bundle/mod.ts";

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

Deno.test("machine.upgrade.trial_deadline: 15 min unless set, in ms; under a minute refused with its line", () => {
  const parse = (upgrade: string) =>
    parseMachineConfig(
      `version: v1alpha1\nmachine:\n  hostname: node-1\n${upgrade}`,
      "t.yaml",
    );
  const unset = parse("");
  assert.ok(unset.ok);
  assert.equal(unset.config.machine.upgrade.trial_deadline, 15 * 60_000);
  const set = parse("  upgrade:\n    trial_deadline: 20m\n");
  assert.ok(set.ok);
  assert.equal(set.config.machine.upgrade.trial_deadline, 20 * 60_000);
  const short = parse("  upgrade:\n    trial_deadline: 30s\n");
  assert.ok(!short.ok);
  assert.match(short.errors[0].format(), /t\.yaml:5:\d+.*at least 1m/);
});

Deno.test("machine.upgrade.boot_tries: 3 unless set; 1 to 10 whole tries, anything else refused with its line", () => {
  const parse = (upgrade: string) =>
    parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: node-1\n${upgrade}`, "t.yaml");
  const unset = parse("");
  assert.ok(unset.ok);
  assert.equal(unset.config.machine.upgrade.boot_tries, 3);
  for (const tries of [1, 10]) {
    const set = parse(`  upgrade:\n    boot_tries: ${tries}\n`);
    assert.ok(set.ok);
    assert.equal(set.config.machine.upgrade.boot_tries, tries);
  }
  for (
    const [bad, why] of [["0", /at least 1/], ["11", /at most 10/], [
      "2.5",
      /whole number/,
    ]] as const
  ) {
    const r = parse(`  upgrade:\n    boot_tries: ${bad}\n`);
    assert.ok(!r.ok, bad);
    assert.match(r.errors[0].format(), new RegExp(`t\\.yaml:5:\\d+.*${why.source}`));
  }
});
