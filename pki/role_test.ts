import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { issueClientCertificate } from "./client_certificate.ts";
import { issueLeafCertificate } from "./leaf_certificate.ts";
import { isRole, roleFromCertificate, roleFromOrganizations, ROLES } from "./role.ts";
import { x509 } from "./x509_provider.ts";

Deno.test("roleFromCertificate round-trips every role from PEM, DER, Buffer and { raw }", async () => {
  const ca = await createCertificateAuthority();
  for (const role of ROLES) {
    const { cert, certPem } = await issueClientCertificate({ ca, name: "n", role });
    const der = new Uint8Array(cert.rawData);
    assert.equal(roleFromCertificate(certPem), role);
    assert.equal(roleFromCertificate(der), role);
    assert.equal(roleFromCertificate(cert.rawData), role);
    assert.equal(roleFromCertificate(cert), role);
    // node:tls getPeerCertificate() gives a Buffer, possibly a view into a larger pool
    const pooled = Buffer.concat([Buffer.alloc(7), Buffer.from(der)]).subarray(7);
    assert.equal(roleFromCertificate({ raw: pooled }), role);
    assert.equal(roleFromCertificate(pooled), role);
  }
});

Deno.test("roleFromCertificate is a gate: no role, no cert or garbage give undefined", async () => {
  const ca = await createCertificateAuthority();
  assert.equal(roleFromCertificate(ca.certPem), undefined, "O=machined is not a role");
  assert.equal(roleFromCertificate({} as { raw: Uint8Array }), undefined);
  assert.equal(roleFromCertificate("not a certificate"), undefined);
  assert.equal(roleFromCertificate(new Uint8Array([1, 2, 3])), undefined);
  const multi = await issueLeafCertificate({
    ca,
    subject: [{ O: ["os:reader", "os:operator", "acme"] }, { CN: ["m"] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
  });
  assert.equal(roleFromCertificate(multi.certPem), "os:operator");
});

Deno.test("roleFromOrganizations and isRole", () => {
  assert.equal(roleFromOrganizations(["os:reader", "os:admin"]), "os:admin");
  assert.equal(roleFromOrganizations(["admin"]), undefined);
  assert.ok(isRole("os:reader"));
  assert.ok(!isRole("os:root"));
  assert.ok(!isRole(undefined));
});
