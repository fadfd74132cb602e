import assert from "node:assert/strict";
import { x509 } from "./x509_provider.ts";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { DAY_MS } from "./keyed_certificate.ts";
import {
  issueServerCertificate,
  serverSubjectAltNames,
  subjectAltNamesOf,
} from "./server_certificate.ts";

Deno.test("server certificate: SANs, serverAuth, AKI, 1 year, chains to its CA only", async () => {
  const now = new Date("2030-06-01T00:00:00Z");
  const ca = await createCertificateAuthority({ now });
  const other = await createCertificateAuthority({ now });
  const server = await issueServerCertificate({
    ca,
    hostnames: ["Node-1", "node-1.example.org"],
    addresses: ["10.0.0.5", "FD00::5", "127.0.0.1"],
    now,
  });
  const sans = subjectAltNamesOf(server.cert);
  assert.deepEqual(sans.dns, ["node-1", "node-1.example.org", "localhost"]);
  assert.deepEqual(new Set(sans.ip), new Set(["10.0.0.5", "fd00::5", "127.0.0.1", "::1"]));
  assert.equal(server.cert.subjectName.getField("CN")[0], "Node-1");

  const eku = server.cert.getExtension(x509.ExtendedKeyUsageExtension);
  assert.deepEqual(Array.from(eku?.usages ?? []), [x509.ExtendedKeyUsage.serverAuth]);
  const ku = server.cert.getExtension(x509.KeyUsagesExtension);
  assert.ok(ku && ku.usages & x509.KeyUsageFlags.digitalSignature);
  assert.equal(server.cert.getExtension(x509.BasicConstraintsExtension)?.ca, false);
  const aki = server.cert.getExtension(x509.AuthorityKeyIdentifierExtension);
  assert.equal(aki?.keyId, ca.cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId);

  assert.equal(server.cert.notAfter.getTime() - now.getTime(), 365 * DAY_MS);
  assert.equal(server.cert.issuer, ca.cert.subject);
  assert.ok(await server.cert.verify({ publicKey: ca.cert.publicKey, date: now }));
  assert.equal(await server.cert.verify({ publicKey: other.cert.publicKey, date: now }), false);

  const chain = await new x509.X509ChainBuilder({ certificates: [ca.cert] }).build(server.cert);
  assert.equal(chain.length, 2);
  const foreign = await new x509.X509ChainBuilder({ certificates: [other.cert] }).build(
    server.cert,
  );
  assert.equal(foreign.length, 1, "no path to a CA that did not sign it");
});

Deno.test("serverSubjectAltNames dedupes, strips brackets/zones and refuses non-addresses", () => {
  assert.deepEqual(serverSubjectAltNames(["localhost"], ["[::1]", "fe80::1%eth0"]), [
    { type: "dns", value: "localhost" },
    { type: "ip", value: "::1" },
    { type: "ip", value: "fe80::1" },
    { type: "ip", value: "127.0.0.1" },
  ]);
  assert.throws(() => serverSubjectAltNames([], ["10.0.0.5/24"]), RangeError);
  assert.throws(() => serverSubjectAltNames([], ["node-1"]), RangeError);
});
