import assert from "node:assert/strict";
import { createCertificateAuthority, DAY_MS, issueServerCertificate, x509 } from "../../pki/mod.ts";
import { parseMachineConfig } from "../parse_machine_config.ts";
import { inspectCaPem, MAX_TRUSTED_ROOT_PEM_BYTES } from "./trusted_roots.ts";

/** A config whose trusted roots are `entries` (name, pem), PEMs as literal blocks. */
function config(...entries: [string, string][]): string {
  const roots = entries.map(([name, pem]) =>
    `    - name: ${JSON.stringify(name)}\n      pem: |\n${
      pem.trimEnd().split("\n").map((l) => `        ${l}`).join("\n")
    }\n`
  ).join("");
  return `version: v1alpha1\nmachine:\n  hostname: node-1\n  trusted_roots:\n${roots}`;
}

function errors(text: string): string[] {
  const r = parseMachineConfig(text, "t.yaml");
  assert.ok(!r.ok, "expected errors, got a valid config");
  return r.errors.map((e) => e.format());
}

Deno.test("a CA is accepted, with its subject, fingerprint and expiry", async () => {
  const ca = await createCertificateAuthority({ commonName: "registry CA" });
  const r = inspectCaPem(ca.certPem);
  assert.ok(r.ok);
  assert.equal(r.facts.subject, "O=machined, CN=registry CA");
  assert.match(r.facts.fingerprint, /^SHA256:[0-9a-f]{64}$/);
  assert.equal(r.facts.notAfter.getTime(), ca.cert.notAfter.getTime());
  const parsed = parseMachineConfig(config(["registry", ca.certPem]), "t.yaml");
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.map((e) => e.format()).join("\n"));
  assert.equal(parsed.config.machine.trusted_roots[0].name, "registry");
});

Deno.test("a leaf certificate is refused with its path and position: not a CA", async () => {
  const ca = await createCertificateAuthority();
  const leaf = await issueServerCertificate({ ca, hostnames: ["reg"], addresses: [] });
  const [e, ...rest] = errors(config(["leaf", leaf.certPem]));
  assert.deepEqual(rest, []);
  assert.match(e, /^t\.yaml:6:\d+: machine\.trusted_roots\[0\]\.pem: not a trusted root: /);
  assert.match(e, /is not a CA \(basicConstraints CA is not set\) and not self-signed/);
});

const EC = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

/** A server certificate (CA:FALSE) named `subject`, signed by `signer` or by its own key. */
async function serverCertificate(subject: string, signer?: CryptoKeyPair) {
  const keys = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "01",
    subject,
    issuer: subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + DAY_MS),
    publicKey: keys.publicKey,
    signingKey: (signer ?? keys).privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "registry.example" }]),
    ],
  });
  return cert.toString("pem");
}

Deno.test("Talos failure mode: a self-signed registry (its own server certificate is accepted as a root)", async () => {
  const pem = await serverCertificate("CN=registry.example");
  const r = inspectCaPem(pem);
  assert.ok(r.ok, r.ok ? "" : r.problem);
  assert.equal(r.facts.subject, "CN=registry.example");
  const parsed = parseMachineConfig(config(["registry", pem]), "t.yaml");
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.errors.map((e) => e.format()).join("\n"));
});

Deno.test("a certificate naming itself as issuer but signed by another key is refused", async () => {
  const other = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]) as CryptoKeyPair;
  const r = inspectCaPem(await serverCertificate("CN=registry.example", other));
  assert.ok(!r.ok && /is not a CA .* and not self-signed/.test(r.problem), JSON.stringify(r));
});

Deno.test("an expired CA is refused, naming when it expired", async () => {
  const ca = await createCertificateAuthority({
    now: new Date(Date.now() - 10 * DAY_MS),
    lifetimeMs: DAY_MS,
  });
  const [e] = errors(config(["old", ca.certPem]));
  assert.match(e, /machine\.trusted_roots\[0\]\.pem: not a trusted root: .* expired on 20/);
});

Deno.test("garbage, two blocks in one entry and oversize PEMs are refused before parsing", async () => {
  const ca = await createCertificateAuthority();
  assert.deepEqual(inspectCaPem("hello"), { ok: false, problem: "no PEM CERTIFICATE block" });
  const bad = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
  const r = inspectCaPem(bad);
  assert.ok(!r.ok && r.problem.startsWith("not an X.509 certificate"));
  const two = inspectCaPem(ca.certPem + ca.certPem);
  assert.ok(!two.ok && /2 certificates/.test(two.problem));
  const big = inspectCaPem(ca.certPem + " ".repeat(MAX_TRUSTED_ROOT_PEM_BYTES));
  assert.ok(!big.ok && /more than 16384/.test(big.problem));
});

Deno.test("the same certificate twice is refused, naming both entries", async () => {
  const ca = await createCertificateAuthority();
  const other = await createCertificateAuthority();
  const es = errors(config(["a", ca.certPem], ["b", other.certPem], ["c", ca.certPem]));
  assert.equal(es.length, 1);
  assert.match(
    es[0],
    /machine\.trusted_roots\[2\]\.pem: trusted root "c" \(entry 2\) is the same certificate as "a" \(entry 0\): SHA256:[0-9a-f]{64} \(remove one of the two entries\)$/,
  );
});

Deno.test("names are unique and free of control characters", async () => {
  const a = await createCertificateAuthority();
  const b = await createCertificateAuthority();
  const [dup] = errors(config(["x", a.certPem], ["x", b.certPem]));
  assert.match(
    dup,
    /machine\.trusted_roots\[1\]\.name: trusted root name "x" is already used by entry 0/,
  );
  const [ctl] = errors(config(["bad\u001bname", a.certPem]));
  assert.match(ctl, /machine\.trusted_roots\[0\]\.name: invalid trusted root name: .*U\+001B/);
});
