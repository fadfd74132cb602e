import { equal, notEqual, throws } from "node:assert/strict";
import { createHash } from "node:crypto";
import { canonicalJson, configSha256 } from "./config_hash.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

const parse = (text: string) => {
  const r = parseMachineConfig(text, "test");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
};

Deno.test("canonical JSON sorts members, drops undefined, keeps array order", () => {
  equal(
    canonicalJson({ b: [3, { z: 1, a: "é" }], a: undefined, c: null, "\u00e9": true, A: 1.5 }),
    '{"A":1.5,"b":[3,{"a":"é","z":1}],"c":null,"é":true}',
  );
  equal(canonicalJson([undefined, "x\n"]), '[null,"x\\n"]');
});

Deno.test("canonical JSON refuses what JSON cannot hold", () => {
  throws(() => canonicalJson({ n: NaN }), TypeError);
  throws(() => canonicalJson({ n: 1n }), TypeError);
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  throws(() => canonicalJson(loop), /refers to itself/);
});

Deno.test("the hash is SHA-256 of the canonical JSON, equal for texts that mean the same", () => {
  const a = parse(
    "version: v1alpha1\nmachine:\n  hostname: a\n  sysctls: {net.b: '1', net.a: '2'}\n",
  );
  const b = parse(
    '# a comment\nmachine:\n  sysctls:\n    net.a: "2"\n    net.b: "1"\n  hostname: \'a\'\nversion: v1alpha1\n',
  );
  const c = parse(
    "version: v1alpha1\nmachine:\n  hostname: c\n  sysctls: {net.b: '1', net.a: '2'}\n",
  );
  equal(configSha256(a), configSha256(b));
  notEqual(configSha256(a), configSha256(c));
  equal(configSha256(a), createHash("sha256").update(canonicalJson(a)).digest("hex"));
  equal(configSha256(a).length, 64);
});

Deno.test("YAML's special floats never reach the hash: refused, or turned into strings", () => {
  const places = [
    (x: string) => `  sysctls: {net.a: ${x}}\n`,
    (x: string) => `  services: [{id: a, command: [/bin/a], env: {A: ${x}}}]\n`,
    (x: string) => `  api: {max_message_bytes: ${x}}\n`,
    (x: string) => `  logging: {ring_lines: ${x}}\n`,
    (x: string) => `  services: [{id: a, command: [/bin/a], limits: {cpu_max: ${x}}}]\n`,
  ];
  let accepted = 0;
  for (const place of places) {
    for (const x of [".nan", ".inf", "-.inf", "1e400"]) {
      const r = parseMachineConfig(`version: v1alpha1\nmachine:\n  hostname: h\n${place(x)}`, "t");
      if (!r.ok) continue;
      accepted++;
      equal(configSha256(r.config).length, 64, place(x));
    }
  }
  // An infinite env value is taken as the string "Infinity": hashed, not refused.
  equal(accepted > 0, true);
});
