import assert from "node:assert/strict";
import fc from "fast-check";
import { configDiff, deepEqual } from "./config_diff.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

function parse(text: string) {
  const r = parseMachineConfig(text, "t.yaml");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
}

const BASE = "version: v1alpha1\nmachine:\n  hostname: node-1\n";

Deno.test("configDiff: equal configs differ nowhere", () => {
  assert.deepEqual(configDiff(parse(BASE), parse(BASE)), []);
});

Deno.test("configDiff names each changed leaf, added and removed sections, and whole lists", () => {
  const a = parse(
    BASE + "  sysctls:\n    net.ipv4.ip_forward: '1'\n  api:\n    cert_sans: [a.example]\n",
  );
  const b = parse(
    "version: v1alpha1\nmachine:\n  hostname: node-2\n  install:\n    disk: /dev/vda\n" +
      "  api:\n    listen: 0.0.0.0:50001\n    cert_sans: [a.example, b.example]\n",
  );
  assert.deepEqual(configDiff(a, b), [
    "machine.api.cert_sans",
    "machine.api.listen",
    "machine.hostname",
    "machine.install",
    "machine.sysctls.net.ipv4.ip_forward",
  ]);
});

Deno.test("configDiff: a list that changes is one path", () => {
  const svc = (cmd: string) => BASE + `  services:\n    - id: web\n      command: [${cmd}]\n`;
  assert.deepEqual(configDiff(parse(svc("/bin/a")), parse(svc("/bin/b"))), ["machine.services"]);
});

Deno.test("configDiff is empty exactly when the values are deep-equal (property)", () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  fc.assert(fc.property(json, json, (a, b) => {
    assert.equal(configDiff(a, b).length === 0, deepEqual(a, b));
    assert.deepEqual(configDiff(a, structuredClone(a)), []);
  }));
});
