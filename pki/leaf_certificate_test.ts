import assert from "node:assert/strict";
import { x509 } from "./x509_provider.ts";
import { createCertificateAuthority } from "./certificate_authority.ts";
import { generateKeyPair, SIGNING_ALGORITHM } from "./key_pem.ts";
import type { CertificateAuthority } from "./keyed_certificate.ts";
import { issueLeafCertificate, type LeafCertificateParams } from "./leaf_certificate.ts";

/** The first element of a SEQUENCE's content: a certificate's TBSCertificate. */
function tbsOf(der: ArrayBuffer): Uint8Array {
  const b = new Uint8Array(der);
  const skip = (at: number) => (b[at + 1] & 0x80 ? 2 + (b[at + 1] & 0x7f) : 2);
  const lengthAt = (at: number) => {
    if (!(b[at + 1] & 0x80)) return b[at + 1];
    let n = 0;
    for (let i = 0; i < (b[at + 1] & 0x7f); i++) n = n * 256 + b[at + 2 + i];
    return n;
  };
  const start = skip(0);
  return b.subarray(start, start + skip(start) + lengthAt(start));
}

/**
 * The library's generator, given what our certificate says (serial, key,
 * dates), with the extensions the leaf profile lists: the reference our DER
 * must equal byte for byte.
 */
async function libraryTbs(
  cert: x509.X509Certificate,
  params: LeafCertificateParams,
): Promise<Uint8Array> {
  const publicKey = await cert.publicKey.export(
    { name: "ECDSA", namedCurve: "P-256" },
    ["verify"],
  );
  const caSki = params.ca.cert.getExtension(x509.SubjectKeyIdentifierExtension);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    await x509.SubjectKeyIdentifierExtension.create(publicKey),
    caSki
      ? new x509.AuthorityKeyIdentifierExtension(caSki.keyId, false)
      : await x509.AuthorityKeyIdentifierExtension.create(params.ca.cert.publicKey, false),
  ];
  if (params.extendedKeyUsages.length) {
    extensions.push(new x509.ExtendedKeyUsageExtension([...params.extendedKeyUsages], false));
  }
  if (params.subjectAltNames?.length) {
    extensions.push(new x509.SubjectAlternativeNameExtension(params.subjectAltNames, false));
  }
  const reference = await x509.X509CertificateGenerator.create({
    serialNumber: cert.serialNumber,
    subject: params.subject,
    issuer: params.ca.cert.subjectName,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    publicKey,
    signingKey: params.ca.key,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions,
  });
  return tbsOf(reference.rawData);
}

async function assertLikeLibrary(params: LeafCertificateParams): Promise<x509.X509Certificate> {
  const issued = await issueLeafCertificate(params);
  assert.deepEqual(tbsOf(issued.cert.rawData), await libraryTbs(issued.cert, params));
  assert.ok(await issued.cert.verify({ publicKey: params.ca.cert.publicKey, signatureOnly: true }));
  return issued.cert;
}

const now = new Date("2030-06-01T12:34:56.789Z");
const ca = await createCertificateAuthority({ now });

Deno.test("leaf DER equals the library's: a server profile with DNS, IPv4 and IPv6 names", async () => {
  const cert = await assertLikeLibrary({
    ca,
    subject: [{ O: ["machined"] }, { CN: ["node-1"] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth],
    subjectAltNames: [
      { type: "dns", value: "node-1" },
      { type: "dns", value: "localhost" },
      { type: "ip", value: "10.0.2.15" },
      { type: "ip", value: "fd00::5" },
      { type: "ip", value: "::1" },
      { type: "ip", value: "2001:db8:0:0:1:0:0:1" },
    ],
    now,
  });
  assert.equal(cert.notBefore.getTime(), Math.floor(now.getTime() / 1000) * 1000 - 5 * 60_000);
});

Deno.test("leaf DER equals the library's: a client profile, roles and a UTF-8 name", async () => {
  await assertLikeLibrary({
    ca,
    subject: [{ O: ["os:admin", "os:reader"] }, { CN: ["Zoë (ops)"] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
    now,
  });
});

Deno.test("leaf DER equals the library's: no EKU, GeneralizedTime past 2049", async () => {
  const cert = await assertLikeLibrary({
    ca,
    subject: [{ CN: ["long"] }],
    extendedKeyUsages: [],
    lifetimeMs: 30 * 365 * 86_400_000,
    now,
  });
  assert.equal(cert.notAfter.getUTCFullYear(), 2060);
});

Deno.test("leaf DER: a SAN kind it does not write is left to the library", async () => {
  await assertLikeLibrary({
    ca,
    subject: [{ CN: ["mail"] }],
    extendedKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
    subjectAltNames: [{ type: "dns", value: "a.example" }, { type: "email", value: "a@example" }],
    now,
  });
});

Deno.test("leaf DER: a CA without an SKI gets the AKI of its key's SHA-1", async () => {
  const keys = await generateKeyPair();
  const bare = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: [{ CN: ["bare"] }],
    notBefore: now,
    notAfter: new Date(now.getTime() + 86_400_000),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const bareCa: CertificateAuthority = {
    cert: bare,
    certPem: "",
    key: keys.privateKey,
    keyPem: "",
  };
  await assertLikeLibrary({ ca: bareCa, subject: [{ CN: ["leaf"] }], extendedKeyUsages: [], now });
});
