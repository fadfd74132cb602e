import assert from "node:assert/strict";
import { x509 } from "./x509_provider.ts";
import {
  CA_LIFETIME_MS,
  createCertificateAuthority,
  loadCertificateAuthority,
} from "./certificate_authority.ts";
import { DAY_MS } from "./keyed_certificate.ts";
import { isPkiError } from "./pki_error.ts";

Deno.test("CA is a self-signed X.509 v3 CA with critical BasicConstraints, KeyUsage and SKI", async () => {
  const now = new Date("2030-01-01T00:00:00Z");
  const ca = await createCertificateAuthority({ now });
  assert.equal(ca.cert.subject, ca.cert.issuer);
  assert.ok(await ca.cert.isSelfSigned());
  assert.equal(new x509.X509Certificate(ca.certPem).serialNumber, ca.cert.serialNumber);
  // version: v3 is encoded as 2 in tbsCertificate.version
  assert.equal(
    (ca.cert as unknown as { asn: { tbsCertificate: { version: number } } }).asn.tbsCertificate
      .version,
    2,
  );

  const basic = ca.cert.getExtension(x509.BasicConstraintsExtension);
  assert.ok(basic?.ca);
  assert.ok(basic.critical);
  const ku = ca.cert.getExtension(x509.KeyUsagesExtension);
  assert.ok(ku?.critical);
  assert.ok(ku.usages & x509.KeyUsageFlags.keyCertSign);
  assert.ok(ku.usages & x509.KeyUsageFlags.cRLSign);
  assert.ok(ca.cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);
  assert.equal(ca.cert.signatureAlgorithm.name, "ECDSA");
  assert.equal((ca.cert.publicKey.algorithm as EcKeyAlgorithm).namedCurve, "P-256");

  const lifetime = ca.cert.notAfter.getTime() - now.getTime();
  assert.equal(lifetime, CA_LIFETIME_MS);
  assert.ok(Math.abs(lifetime - 3650 * DAY_MS) < DAY_MS);
  assert.ok(ca.cert.notBefore < now, "notBefore is backdated for clock skew");
  assert.match(ca.keyPem, /^-----BEGIN PRIVATE KEY-----/);
});

Deno.test("a CA round-trips through PEM and a foreign key is refused", async () => {
  const ca = await createCertificateAuthority();
  const loaded = await loadCertificateAuthority(ca.certPem, ca.keyPem);
  assert.equal(loaded.cert.serialNumber, ca.cert.serialNumber);

  const other = await createCertificateAuthority();
  await assert.rejects(
    loadCertificateAuthority(ca.certPem, other.keyPem, "/x"),
    (e) => isPkiError(e, "key_mismatch") && e.details.path === "/x",
  );
  await assert.rejects(
    loadCertificateAuthority("nope", ca.keyPem),
    (e) => isPkiError(e, "invalid"),
  );
  await assert.rejects(
    loadCertificateAuthority(ca.certPem, "nope"),
    (e) => isPkiError(e, "invalid"),
  );
});

Deno.test("two CAs never share a serial number", async () => {
  const [a, b] = await Promise.all([createCertificateAuthority(), createCertificateAuthority()]);
  assert.notEqual(a.cert.serialNumber, b.cert.serialNumber);
  assert.equal(a.cert.serialNumber.length, 32);
});
