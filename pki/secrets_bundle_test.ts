import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { isPkiError } from "./pki_error.ts";
import { loadSecretsBundle, parseSecretsBundle, writeSecretsBundle } from "./secrets_bundle.ts";

Deno.test("a secrets bundle round-trips through a 0600 YAML file with PEM values", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ca = await createCertificateAuthority();
    const path = join(dir, "secrets.yaml");
    await writeSecretsBundle(path, { ca });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const doc = parse(await Deno.readTextFile(path));
    assert.equal(doc.version, "v1");
    assert.match(doc.certs.ca.crt, /^-----BEGIN CERTIFICATE-----/);
    assert.match(doc.certs.ca.key, /^-----BEGIN PRIVATE KEY-----/);
    const loaded = await loadSecretsBundle(path);
    assert.equal(loaded.ca.cert.serialNumber, ca.cert.serialNumber);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bad secrets bundles are typed errors", async () => {
  const a = await createCertificateAuthority();
  const b = await createCertificateAuthority();
  await assert.rejects(parseSecretsBundle("{{{", "s.yaml"), (e) => isPkiError(e, "invalid"));
  await assert.rejects(
    parseSecretsBundle("version: v1\ncerts: {}\n", "s.yaml"),
    (e) => isPkiError(e, "invalid") && e.message.includes("certs.ca"),
  );
  const mixed = `version: v1\ncerts:\n  ca:\n    crt: ${JSON.stringify(a.certPem)}\n    key: ${
    JSON.stringify(b.keyPem)
  }\n`;
  await assert.rejects(parseSecretsBundle(mixed), (e) => isPkiError(e, "key_mismatch"));
});
