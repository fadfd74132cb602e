import assert from "node:assert/strict";
import { formatConfigErrors } from "./config_error.ts";
import { parseMachineConfig } from "./parse_machine_config.ts";
import {
  MAX_QUOTED_CHARS,
  redactConfigError,
  redactConfigSecrets,
  REDACTED,
  SECRET_PATHS,
  touchesSecret,
} from "./secrets.ts";
import { ConfigError } from "./config_error.ts";
import { CANARY, CANARY_PEM, CANARY_SHAPES } from "./testing.ts";

const HEAD = "version: v1alpha1\nmachine:\n  hostname: node-1\n";
const pemBlock = (indent: string) => "|\n" + CANARY_PEM.replace(/^/gm, indent).trimEnd() + "\n";

Deno.test("the schema marks machine.ca.key, the volume passphrases and WireGuard keys secret", () => {
  assert.deepEqual(SECRET_PATHS, [
    ["machine", "install", "encryption", "state", "keys", "*", "passphrase"],
    ["machine", "install", "encryption", "ephemeral", "keys", "*", "passphrase"],
    ["machine", "network", "wireguard", "*", "private_key"],
    ["machine", "network", "wireguard", "*", "peers", "*", "preshared_key"],
    ["machine", "ca", "key"],
  ]);
  assert.ok(touchesSecret(["machine", "ca", "key"]));
  assert.ok(touchesSecret(["machine", "ca"])); // holds the secret
  assert.ok(touchesSecret(["machine", "ca", "key", 0])); // inside it
  assert.ok(!touchesSecret(["machine", "ca", "crt"]));
  assert.ok(!touchesSecret(["machine", "caa"]));
});

Deno.test("a canary key in every wrong shape never shows in an error", () => {
  for (const [shape, yaml] of Object.entries(CANARY_SHAPES)) {
    const r = parseMachineConfig(HEAD + yaml, "t.yaml");
    assert.ok(!r.ok, shape);
    const shown = formatConfigErrors(r.errors) + JSON.stringify(r.errors) +
      r.errors.map((e) => `${e.path} ${e.segments.join(" ")} ${String(e.cause ?? "")}`).join();
    assert.ok(!shown.includes(CANARY.slice(20, 40)), `${shape}: ${shown}`);
    assert.ok(!/PRIVATE KEY-----/.test(shown), `${shape}: ${shown}`);
    for (const e of r.errors) assert.ok(e.line >= 1, `${shape}: ${e.format()}`);
  }
});

Deno.test("the errors still say what is wrong and where", () => {
  const errors = (yaml: string) => {
    const r = parseMachineConfig(HEAD + yaml, "t.yaml");
    assert.ok(!r.ok);
    return r.errors.map((e) => e.format());
  };
  assert.deepEqual(errors(CANARY_SHAPES["ca as a string"]), [
    `t.yaml:4:7: machine.ca: expected a mapping, got string "${REDACTED}"`,
  ]);
  assert.deepEqual(errors(CANARY_SHAPES["key folded onto one line (no |)"]), [
    "t.yaml:6:10: machine.ca.key: not a PEM private key (paste the whole PEM block, BEGIN and END lines included, after a YAML | (a literal block))",
  ]);
  const [domain] = errors(CANARY_SHAPES["under domainname"]);
  assert.match(domain, /^t\.yaml:4:15: machine\.domainname: invalid domain name "\(redacted\)"/);
  assert.match(
    errors(CANARY_SHAPES["as a mapping key"])[0],
    /^t\.yaml:4:3: machine\["\(redacted\)"\]: unknown key "\(redacted\)"/,
  );
});

Deno.test("a valid config shows (redacted) for the key; the input is untouched", () => {
  const r = parseMachineConfig(
    HEAD +
      `  ca:\n    crt: ${pemBlock("      ").replace(/EC PRIVATE KEY/g, "CERTIFICATE")}    key: ${
        pemBlock("      ")
      }`,
    "t.yaml",
  );
  assert.ok(r.ok, r.ok ? "" : formatConfigErrors(r.errors));
  const shown = redactConfigSecrets(r.config);
  assert.equal(shown.machine.ca?.key, REDACTED);
  assert.match(shown.machine.ca?.crt ?? "", /BEGIN CERTIFICATE/);
  assert.ok(r.config.machine.ca?.key.includes(CANARY));
  const noCa = parseMachineConfig(HEAD, "t.yaml");
  assert.ok(noCa.ok);
  assert.deepEqual(redactConfigSecrets(noCa.config), noCa.config);
});

Deno.test("long quoted values are cut; errors without secrets are returned as they are", () => {
  const long = "x".repeat(500);
  const e = new ConfigError({
    kind: "value",
    source: "t.yaml",
    segments: ["machine", "hostname"],
    line: 4,
    column: 13,
    message: `invalid hostname ${JSON.stringify(long)}`,
  });
  const cut = redactConfigError(e);
  assert.equal(cut.message, `invalid hostname "${"x".repeat(MAX_QUOTED_CHARS)}…"`);
  const plain = new ConfigError({ ...e, message: 'invalid hostname "Node_1"' });
  assert.equal(redactConfigError(plain), plain);
});
