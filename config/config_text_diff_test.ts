import { equal, match } from "node:assert/strict";
import { configTextDiff, configYamlLines } from "./config_text_diff.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

const parse = (text: string) => {
  const r = parseMachineConfig(text, "test");
  if (!r.ok) throw new Error(r.errors.map((e) => e.format()).join("\n"));
  return r.config;
};

Deno.test("the same config spelled differently: no diff", () => {
  const a = parse("version: v1alpha1\nmachine:\n  hostname: a\n  time: {servers: [x.example]}\n");
  const b = parse(
    "machine:\n  # NTP\n  time:\n    servers:\n      - 'x.example'\n  hostname: \"a\"\nversion: v1alpha1\n",
  );
  equal(configTextDiff(a, b).text, "");
});

Deno.test("a hostname change is one removed and one added line with sorted context", () => {
  const a = parse("version: v1alpha1\nmachine:\n  hostname: a\n");
  const b = parse("version: v1alpha1\nmachine:\n  hostname: b\n");
  const d = configTextDiff(a, b);
  match(d.text, /^--- in force\n\+\+\+ requested\n@@ -\d+,\d+ \+\d+,\d+ @@\n/);
  match(d.text, /\n- {2}hostname: a\n\+ {2}hostname: b\n/);
  equal(d.text.split("\n").filter((l) => /^[-+][^-+]/.test(l)).length, 2);
});

Deno.test("no config in force: every line is added", () => {
  const b = parse("version: v1alpha1\nmachine:\n  hostname: b\n");
  const d = configTextDiff(undefined, b);
  const body = d.text.split("\n").slice(3).filter((l) => l !== "");
  equal(body.every((l) => l.startsWith("+")), true);
  equal(body.length, configYamlLines(b).length);
});

Deno.test("a shared object is written out twice, not as a YAML alias", () => {
  const shared = { a: 1 };
  equal(configYamlLines({ x: shared, y: shared }).join("\n"), "x:\n  a: 1\ny:\n  a: 1");
});
