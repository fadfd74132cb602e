import assert from "node:assert/strict";
import { join } from "node:path";
import { certificateFingerprint, x509 } from "../../pki/mod.ts";
import { buildUki } from "../../imager/mod.ts";
import {
  authenticodeDigest,
  AuthenticodeError,
  type DbCertificate,
  readAuthenticodeSignatures,
  verifyAuthenticode,
} from "./mod.ts";
import { derElement } from "./der.ts";
import { readPeImage } from "./pe_image.ts";
import {
  EFI_STUB,
  makeOwner,
  type Owner,
  sbsign,
  sbverifyAccepts,
  SIGNING_MISSING,
  winCertificate,
} from "./testing.ts";

/** "ok" or the refusal's reason. */
async function judge(pe: Uint8Array, db: DbCertificate[]): Promise<string> {
  try {
    const v = await verifyAuthenticode(pe, db);
    assert.ok(v.ok);
    return "ok";
  } catch (e) {
    if (e instanceof AuthenticodeError) return e.reason;
    throw e;
  }
}

/** Ours and sbverify's verdicts on `pe` with `owner`'s db certificate: they must agree. */
async function expect(pe: Uint8Array, owner: Owner, reason: string): Promise<void> {
  assert.equal(await judge(pe, [{ certPem: owner.keys.db.certPem }]), reason);
  assert.equal(await sbverifyAccepts(owner.dbCert, pe), reason === "ok", "sbverify disagrees");
}

/** The PKCS#7 blob of the image's first signature, as a view into `pe`. */
function blobOf(pe: Uint8Array): Uint8Array {
  const entry = readAuthenticodeSignatures(pe)[0];
  return pe.subarray(entry.offset + 8, entry.offset + 8 + derElement(entry.data)!.end);
}

function flipped(pe: Uint8Array, at: number, mask = 0x01): Uint8Array {
  const out = pe.slice();
  out[at] ^= mask;
  return out;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error("needle not found");
}

/** `image` (unsigned) with `entries` as its certificate table. */
function withTable(image: Uint8Array, entries: Uint8Array[]): Uint8Array {
  const at = Math.ceil(image.length / 8) * 8;
  const size = entries.reduce((n, e) => n + e.length, 0);
  const out = new Uint8Array(at + size);
  out.set(image);
  let p = at;
  for (const e of entries) out.set(e, (p += e.length) - e.length);
  const dir = readPeImage(out).certDirectoryAt;
  new DataView(out.buffer).setUint32(dir, at, true);
  new DataView(out.buffer).setUint32(dir + 4, size, true);
  return out;
}

/** A CA standing in for a vendor's db certificate, and a signer it issued. */
async function issuedSigner(parent: string): Promise<{ ca: Owner; leaf: Owner }> {
  const ca = await makeOwner(parent, "vendor-ca");
  const caCert = new x509.X509Certificate(ca.keys.db.certPem);
  const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  const caKey = await crypto.subtle.importKey(
    "pkcs8",
    x509.PemConverter.decode(ca.keys.db.keyPem)[0],
    alg,
    false,
    ["sign"],
  );
  // The CA's own certificate must say it is one for sbverify's chain check.
  const caKeys = { privateKey: caKey, publicKey: await caCert.publicKey.export(alg, ["verify"]) };
  const caSelf = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: caCert.subject,
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const leafKeys = await crypto.subtle.generateKey(
    { ...alg, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  );
  const leafCert = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: "O=vendor, CN=vendor UKI signer",
    issuer: caSelf.subject,
    publicKey: leafKeys.publicKey,
    signingKey: caKey,
    signingAlgorithm: alg,
  });
  const pem = (c: x509.X509Certificate) => c.toString("pem");
  await Deno.writeTextFile(ca.dbCert, pem(caSelf));
  const leafDir = join(parent, "vendor-leaf");
  await Deno.mkdir(leafDir);
  const keyPem = x509.PemConverter.encode(
    await crypto.subtle.exportKey("pkcs8", leafKeys.privateKey),
    "PRIVATE KEY",
  );
  await Deno.writeTextFile(join(leafDir, "db.crt"), pem(leafCert));
  await Deno.writeTextFile(join(leafDir, "db.key"), keyPem);
  return {
    ca: { ...ca, keys: { ...ca.keys, db: { certPem: pem(caSelf), keyPem: "" } } },
    leaf: { keys: ca.keys, dir: leafDir, dbCert: join(leafDir, "db.crt") },
  };
}

Deno.test({
  name: `Authenticode of sbsign's signatures, judged as sbverify judges them (${
    SIGNING_MISSING ?? "needs sbsigntool"
  })`,
  ignore: SIGNING_MISSING !== undefined,
}, async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const acme = await makeOwner(dir, "acme");
    const other = await makeOwner(dir, "other");
    const stub = await Deno.readFile(EFI_STUB);
    const signed = await sbsign(acme, stub);

    await t.step(
      "a signed stub verifies against its db; the verdict names signer and db",
      async () => {
        await expect(signed, acme, "ok");
        const acmeDer = new Uint8Array(new x509.X509Certificate(acme.keys.db.certPem).rawData);
        const v = await verifyAuthenticode(signed, [
          { certPem: other.keys.db.certPem },
          { der: acmeDer },
        ]);
        assert.equal(v.signer, "O=acme, CN=acme Secure Boot db");
        assert.equal(
          v.dbCertificate,
          await certificateFingerprint(
            new x509.X509Certificate(acme.keys.db.certPem),
          ),
        );
        assert.deepEqual(v.digest, authenticodeDigest(signed).sha256);
      },
    );

    await t.step("the digest is the one sbsign signed, and ignores the table", () => {
      const blob = blobOf(signed);
      indexOf(blob, authenticodeDigest(signed).sha256); // throws when absent
      const padded = new Uint8Array(readAuthenticodeSignatures(signed)[0].offset);
      padded.set(stub);
      assert.deepEqual(authenticodeDigest(padded).sha256, authenticodeDigest(signed).sha256);
    });

    await t.step("another owner's db refuses it: untrusted-signer", async () => {
      await expect(signed, other, "untrusted-signer");
    });

    await t.step(
      "a UKI built by the imager verifies; one changed .linux byte does not",
      async () => {
        const uki = await sbsign(
          acme,
          buildUki({
            stub,
            kernel: new Uint8Array(300_000).map((_, i) => i * 7),
            initramfs: new Uint8Array(70_000).fill(3),
            cmdline: "console=ttyS0 machined.slot=A",
            osRelease: "ID=machined\n",
          }),
        );
        await expect(uki, acme, "ok");
        const last = readPeImage(uki).sections.at(-1)!;
        await expect(flipped(uki, last.offset + 1000), acme, "digest-mismatch");
      },
    );

    await t.step("one byte changed in a section: digest-mismatch", async () => {
      await expect(
        flipped(signed, readPeImage(signed).sections[0].offset + 16),
        acme,
        "digest-mismatch",
      );
    });

    await t.step("one byte changed in the signature value: bad-signature", async () => {
      const at = blobOf(signed).byteOffset - signed.byteOffset + blobOf(signed).length - 1;
      await expect(flipped(signed, at), acme, "bad-signature");
    });

    await t.step(
      "one byte changed in the signed attributes (signingTime): bad-signature",
      async () => {
        const blob = blobOf(signed);
        const signingTime = Uint8Array.of(0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 9, 5);
        const year = blob.byteOffset + indexOf(blob, signingTime) + signingTime.length + 2 + 2 + 1;
        await expect(flipped(signed, year), acme, "bad-signature");
      },
    );

    await t.step("one byte changed in the signed image hash: digest-mismatch", async () => {
      const blob = blobOf(signed);
      const at = blob.byteOffset + indexOf(blob, authenticodeDigest(signed).sha256);
      await expect(flipped(signed, at), acme, "digest-mismatch");
    });

    await t.step("one byte changed in the PKCS#7 structure: a parse refusal", async () => {
      const blob = blobOf(signed);
      await expect(flipped(signed, blob.byteOffset + 1, 0x40), acme, "bad-signature");
    });

    await t.step("an unsigned image: unsigned", async () => {
      await expect(stub, acme, "unsigned");
    });

    await t.step("a certificate table cut short: bad-pe", async () => {
      await expect(signed.subarray(0, signed.length - 100), acme, "bad-pe");
    });

    await t.step("a signer issued by a db certificate verifies through it", async () => {
      const { ca, leaf } = await issuedSigner(dir);
      const image = await sbsign(leaf, stub);
      await expect(image, ca, "ok");
      const v = await verifyAuthenticode(image, [{ certPem: ca.keys.db.certPem }]);
      assert.equal(v.signer, "O=vendor, CN=vendor UKI signer");
      assert.equal(
        v.dbCertificate,
        await certificateFingerprint(
          new x509.X509Certificate(ca.keys.db.certPem),
        ),
      );
      await expect(image, acme, "untrusted-signer");
    });

    await t.step("with several signatures, one that holds is enough", async () => {
      const mine = readAuthenticodeSignatures(signed)[0];
      const theirs = readAuthenticodeSignatures(await sbsign(other, stub))[0];
      const entry = (s: typeof mine) => winCertificate(s.data);
      const both = withTable(stub, [
        winCertificate(new Uint8Array(8), 0x0200, 0x0001),
        entry(theirs),
        entry(mine),
      ]);
      assert.equal(await judge(both, [{ certPem: acme.keys.db.certPem }]), "ok");
      assert.equal(await judge(both, [{ certPem: other.keys.db.certPem }]), "ok");
      const none = await verifyAuthenticode(both, [{
        certPem: (await makeOwner(dir, "third")).keys.db.certPem,
      }])
        .catch((e) => e);
      assert.ok(none instanceof AuthenticodeError);
      assert.equal(none.reason, "unsupported"); // the first entry's refusal
      assert.match(none.message, /none of 3 signatures holds/);
      assert.match(none.message, /untrusted-signer|not in db/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a db entry that is not a certificate is the caller's error", async () => {
  await assert.rejects(
    () => verifyAuthenticode(new Uint8Array(), [{ der: Uint8Array.of(1, 2, 3) }]),
    TypeError,
  );
});
