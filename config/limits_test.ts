import assert from "node:assert/strict";
import type { ConfigError } from "./config_error.ts";
import { MAX_CONFIG_BYTES, MAX_DEPTH, MAX_EXPANDED_VALUES, MAX_REPORTED_ERRORS } from "./limits.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";

const HEAD = "version: v1alpha1\nmachine:\n  hostname: node-1\n";

function refused(text: string): ConfigError[] {
  const r = parseMachineConfig(text, "t.yaml");
  assert.ok(!r.ok, "expected errors, got a valid config");
  return r.errors;
}

function sysctls(n: number, name = "net"): string {
  const lines = [HEAD + "  sysctls:"];
  for (let i = 0; i < n; i++) lines.push(`    ${name}.k${i}: ${i}`);
  return lines.join("\n") + "\n";
}

Deno.test("a text over the size limit is refused before parsing, with one error", () => {
  const text = sysctls(100_000);
  assert.ok(text.length > MAX_CONFIG_BYTES);
  const [e, ...rest] = refused(text);
  assert.equal(rest.length, 0);
  assert.equal(e.kind, "limit");
  assert.match(
    e.format(),
    /^t\.yaml:1:1: the config is at least \d+ bytes, over the limit of 262144 bytes \(256 KiB\)/,
  );
  // Multi-byte characters count as bytes: 100k "é" (2 bytes each) is under the
  // limit in characters but over it in UTF-8.
  const wide = HEAD + `  domainname: "${"é".repeat(MAX_CONFIG_BYTES / 2)}"\n`;
  assert.ok(wide.length < MAX_CONFIG_BYTES);
  assert.equal(refused(wide)[0].kind, "limit");
});

Deno.test("a large config under the limit validates (duplicate keys found linearly)", () => {
  const ok = parseMachineConfig(sysctls(10_000), "t.yaml");
  assert.ok(ok.ok);
  assert.equal(Object.keys(ok.config.machine.sysctls).length, 10_000);
  const dup = refused(sysctls(10_000) + "    net.k5: 1\n");
  assert.deepEqual(dup.map((e) => e.format()), [
    't.yaml:10005:5: machine.sysctls["net.k5"]: duplicate key "net.k5" (first defined at line 10)',
  ]);
});

Deno.test("duplicate keys in flow mappings and keys that collide as strings are refused", () => {
  assert.deepEqual(refused(HEAD + "  sysctls: {a.b: 1, a.b: 2}\n").map((e) => e.format()), [
    't.yaml:4:21: machine.sysctls["a.b"]: duplicate key "a.b" (first defined at line 4)',
  ]);
  const [e] = refused(HEAD + '  sysctls:\n    1: a\n    "1": b\n');
  assert.match(e.message, /^duplicate key "1"$/);
});

Deno.test("errors past the cap are counted in one last error", () => {
  const errors = refused(sysctls(5_000, "Bad"));
  assert.equal(errors.length, MAX_REPORTED_ERRORS + 1);
  const last = errors.at(-1)!;
  assert.equal(last.kind, "limit");
  assert.equal(last.message, `and ${5_000 - MAX_REPORTED_ERRORS} more errors`);
  assert.equal(last.hint, `only the first ${MAX_REPORTED_ERRORS} are reported`);
  assert.equal(last.line, 4 + MAX_REPORTED_ERRORS + 1);
  assert.match(
    errors[0].format(),
    /^t\.yaml:5:5: machine\.sysctls\["Bad\.k0"\]: invalid sysctl name/,
  );
});

Deno.test("a self-referencing alias is a positioned error, not a stack overflow", () => {
  const errors = refused(HEAD + "  sysctls: &r\n    a: *r\n");
  assert.deepEqual(errors.map((e) => e.format()), [
    "t.yaml:5:8: machine.sysctls.a: alias refers to a mapping or list that contains it (a cycle) (an alias cannot point into its own anchor)",
  ]);
  const flow = refused(HEAD + "  services: &s [{id: a, command: [/bin/a], depends_on: *s}]\n");
  assert.equal(flow.length, 1);
  assert.match(
    flow[0].format(),
    /^t\.yaml:4:\d+: machine\.services\[0\]\.depends_on: alias refers/,
  );
});

Deno.test("a billion-laughs document is refused", () => {
  const bomb = [
    HEAD + "  sysctls:",
    "    a.a: &a [x, x, x, x, x, x, x, x, x, x]",
    "    a.b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "    a.c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "    a.d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
    "    a.e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
    "    a.f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]",
  ].join("\n");
  const [e, ...rest] = refused(bomb);
  assert.equal(rest.length, 0);
  assert.equal(e.kind, "limit");
  assert.match(e.message, /aliases expand more than 100 times/);
});

Deno.test("aliases of one large anchor are bounded by the expanded size", () => {
  // The YAML library allows 100 uses of an anchor however large it is.
  const anchor = `[${Array.from({ length: 3000 }, () => "1").join(", ")}]`;
  const uses = Array.from({ length: 99 }, () => "*big").join(", ");
  const [e, ...rest] = refused(HEAD + `  sysctls:\n    a.a: &big ${anchor}\n    a.b: [${uses}]\n`);
  assert.equal(rest.length, 0);
  assert.equal(e.kind, "limit");
  assert.equal(
    e.message,
    `the document expands to more than ${MAX_EXPANDED_VALUES} values through aliases`,
  );
  assert.ok(e.path.startsWith('machine.sysctls["a.b"]['), e.path);
  assert.ok(e.line >= 5, e.format());
});

Deno.test("nesting past the depth limit is refused with path and position", () => {
  for (const deep of [2_000, 100_000]) {
    const flow = refused(HEAD + "  sysctls: " + "[".repeat(deep) + "]".repeat(deep) + "\n");
    assert.equal(flow.length, 1);
    assert.equal(flow[0].kind, "limit");
    assert.equal(flow[0].line, 4);
    assert.equal(flow[0].column, 12 + MAX_DEPTH - 2);
    assert.match(flow[0].message, /nested more than 64 levels deep/);
    assert.ok(flow[0].path.startsWith("machine.sysctls[0][0]"), flow[0].path);
  }
  let block = HEAD + "  sysctls:\n";
  for (let i = 0; i < 500; i++) block += " ".repeat(4 + i) + "k:\n";
  const [e, ...rest] = refused(block);
  assert.equal(rest.length, 0);
  assert.equal(e.kind, "limit");
  assert.equal(e.line, MAX_DEPTH + 3); // the 65th mapping: root, machine, sysctls on line 5, ...
  assert.match(e.format(), /^t\.yaml:\d+:\d+: machine\.sysctls\.k\.k\.k/);
});

Deno.test("depth past the limit reached only through aliases is refused", () => {
  const level = (n: number) => "[".repeat(n) + "]".repeat(n);
  const text = HEAD +
    `  sysctls:\n    a.a: &x ${
      level(40)
    }\n    a.b: [[[[[[[[[[[[[[[[[[[[[[[[*x]]]]]]]]]]]]]]]]]]]]]]]]\n`;
  const [e, ...rest] = refused(text);
  assert.equal(rest.length, 0);
  assert.equal(e.kind, "limit");
  assert.match(e.message, /once aliases are expanded/);
});

Deno.test("no input makes the parser throw: hostile shapes all become errors", () => {
  const inputs = [
    "&a [*a]",
    "a: &a {b: &b {c: *a}}",
    "[".repeat(50_000),
    "{".repeat(50_000),
    "- ".repeat(20_000) + "x",
    "? ".repeat(5_000) + "x",
    "*unknown",
    "a: !!binary AAAA\n",
  ];
  for (const text of inputs) {
    const r = parseMachineConfig(text, "t.yaml");
    assert.ok(!r.ok);
    for (const e of r.errors) assert.ok(e.line >= 1, e.format());
  }
});
