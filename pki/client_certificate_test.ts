import assert from "node:assert/strict";
import { x509 } from "./x509_provider.ts";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { issueClientCertificate } from "./client_certificate.ts";
import { DAY_MS } from "./keyed_certificate.ts";
import { ROLES } from "./role.ts";

Deno.test("client certificate: CN=name, O=role, clientAuth, v3, 1 year, chains to its CA", async () => {
  const now = new Date("2031-02-03T04:05:06Z");
  const ca = await createCertificateAuthority({ now });
  const other = await createCertificateAuthority({ now });
  for (const role of ROLES) {
    const client = await issueClientCertificate({ ca, name: "alice", role, now });
    assert.deepEqual(client.cert.subjectName.getField("CN"), ["alice"]);
    assert.deepEqual(client.cert.subjectName.getField("O"), [role]);
    const eku = client.cert.getExtension(x509.ExtendedKeyUsageExtension);
    assert.deepEqual(Array.from(eku?.usages ?? []), [x509.ExtendedKeyUsage.clientAuth]);
    const ku = client.cert.getExtension(x509.KeyUsagesExtension);
    assert.ok(ku && ku.usages & x509.KeyUsageFlags.digitalSignature);
    assert.equal(
      (client.cert as unknown as { asn: { tbsCertificate: { version: number } } }).asn
        .tbsCertificate.version,
      2,
    );
    assert.equal(client.cert.notAfter.getTime() - now.getTime(), 365 * DAY_MS);
    assert.ok(await client.cert.verify({ publicKey: ca.cert.publicKey, date: now }));
    assert.equal(await client.cert.verify({ publicKey: other.cert.publicKey, date: now }), false);
  }
});

Deno.test("client certificate refuses unknown roles and empty names", async () => {
  const ca = await createCertificateAuthority();
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    issueClientCertificate({ ca, name: "x", role: "os:root" as any }),
    RangeError,
  );
  await assert.rejects(issueClientCertificate({ ca, name: " ", role: "os:reader" }), RangeError);
});
