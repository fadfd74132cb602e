import assert from "node:assert/strict";
import { renderConfigTemplate } from "../../config/mod.ts";
import { createCertificateAuthority } from "../../pki/mod.ts";
import { type CaPem, caSectionOf, chooseCaSource, MAX_CA_SEARCH_BYTES } from "./ca_source.ts";

const pem = (n: string): CaPem => ({ certPem: `cert ${n}`, keyPem: `key ${n}` });

Deno.test("chooseCaSource: the valid config's CA comes first", () => {
  const all = { config: pem("c"), state: pem("s"), badConfig: pem("b"), image: pem("i") };
  assert.deepEqual(chooseCaSource(all), { source: "config", ca: pem("c") });
});

Deno.test("chooseCaSource: else the last good config on STATE", () => {
  const r = chooseCaSource({ state: pem("s"), badConfig: pem("b"), image: pem("i") });
  assert.deepEqual(r, { source: "state", ca: pem("s") });
});

Deno.test("chooseCaSource: else the bad config's own CA section", () => {
  const r = chooseCaSource({ badConfig: pem("b"), image: pem("i") });
  assert.deepEqual(r, { source: "badConfig", ca: pem("b") });
});

Deno.test("chooseCaSource: else the image's CA", () => {
  assert.deepEqual(chooseCaSource({ image: pem("i") }), { source: "image", ca: pem("i") });
});

Deno.test("chooseCaSource: nothing at all is none (the API does not start)", () => {
  assert.deepEqual(chooseCaSource({}), { source: "none" });
});

async function configWithCa(hostnameLine: string) {
  const ca = await createCertificateAuthority();
  const text = renderConfigTemplate({
    hostname: "node-1",
    ca: { certPem: ca.certPem, keyPem: ca.keyPem },
  }).replace("hostname: node-1", hostnameLine);
  return { ca, text };
}

Deno.test("caSectionOf: a config with a typo elsewhere still yields its CA", async () => {
  const { ca, text } = await configWithCa("hostnme: node-1");
  assert.match(text, /hostnme/);
  const got = caSectionOf(text);
  assert.ok(got);
  assert.equal(got.certPem.trim(), ca.certPem.trim());
  assert.equal(got.keyPem.trim(), ca.keyPem.trim());
});

Deno.test("caSectionOf: an invalid CA section, no section, or no YAML yield nothing", async () => {
  const { text } = await configWithCa("hostname: node-1");
  assert.equal(caSectionOf(text.replace(/BEGIN CERTIFICATE/, "BEGIN NONSENSE")), undefined);
  assert.equal(caSectionOf("version: v1alpha1\nmachine:\n  hostname: x\n"), undefined);
  assert.equal(caSectionOf("machine: [1, 2]\n"), undefined);
  assert.equal(caSectionOf("machine:\n  ca: 3\n"), undefined);
  assert.equal(caSectionOf(": : :\n\t- ["), undefined);
  assert.equal(caSectionOf(""), undefined);
  assert.equal(caSectionOf(" ".repeat(MAX_CA_SEARCH_BYTES + 1)), undefined);
  // Unknown keys inside the CA section make the section itself invalid.
  assert.equal(caSectionOf(text.replace(/(\n\s+)crt:/, "$1crtt: x$1crt:")), undefined);
});

Deno.test("caSectionOf: alias bombs are refused, not expanded", () => {
  const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 12; i++) {
    const prev = String.fromCharCode(96 + i);
    const cur = String.fromCharCode(97 + i);
    lines.push(`${cur}: &${cur} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
  }
  lines.push("machine:\n  ca: *l");
  assert.equal(caSectionOf(lines.join("\n") + "\n"), undefined);
});
