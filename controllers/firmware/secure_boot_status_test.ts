import assert from "node:assert/strict";
import {
  buildSignatureList,
  EFI_CERT_SHA256_GUID,
  EFI_CERT_X509_GUID,
  EFI_GLOBAL_VARIABLE_GUID,
  EFI_IMAGE_SECURITY_DATABASE_GUID,
  FakeFirmwareBackend,
} from "../../platform/firmware/mod.ts";
import { certificateFingerprint, x509 } from "../../pki/mod.ts";
import { type ResourceSpecs, SECURE_BOOT_STATUS } from "../../resources/mod.ts";
import { ControllerRuntime, Store } from "../../runtime/mod.ts";
import { waitForResource } from "../../runtime/testing.ts";
import {
  firmwareSwitch,
  NO_EFI_REASON,
  parseLockdown,
  pcrValues,
  readSecureBootStatus,
} from "./secure_boot_facts.ts";
import { SecureBootStatusController } from "./secure_boot_status.ts";

const OWNER = "11112222-3333-4444-5555-666677778888";
const G = EFI_GLOBAL_VARIABLE_GUID;

async function selfSigned(cn: string): Promise<Uint8Array> {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = await crypto.subtle.generateKey(alg, false, ["sign", "verify"]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${cn}`,
    keys,
    signingAlgorithm: alg,
  });
  return new Uint8Array(cert.rawData);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

Deno.test("pure steps: switches, lockdown word, PCR values", () => {
  assert.equal(firmwareSwitch(Uint8Array.of(1)), "on");
  assert.equal(firmwareSwitch(Uint8Array.of(0)), "off");
  assert.equal(firmwareSwitch(Uint8Array.of(2)), "unknown");
  assert.equal(firmwareSwitch(Uint8Array.of(1, 0)), "unknown");
  assert.equal(firmwareSwitch(undefined), "unknown");
  assert.equal(parseLockdown("none [integrity] confidentiality\n"), "integrity");
  assert.equal(parseLockdown("[none] integrity confidentiality"), "none");
  assert.equal(parseLockdown("none integrity confidentiality"), "unknown");
  assert.equal(parseLockdown("[weird]"), "unknown");
  assert.equal(parseLockdown(undefined), "unknown");
  assert.deepEqual(pcrValues(["a".repeat(64), undefined, "zz", "b".repeat(64)]), [
    { index: 0, sha256: "a".repeat(64) },
    { index: 3, sha256: "b".repeat(64) },
  ]);
});

Deno.test("no EFI (a BIOS or a Pi boot): unknown with the reason, lockdown and TPM still read", async () => {
  const fw = new FakeFirmwareBackend();
  fw.lockdownText = "[none] integrity confidentiality";
  const s = await readSecureBootStatus(fw);
  assert.deepEqual([s.efi, s.secureBoot, s.setupMode, s.reason], [
    false,
    "unknown",
    "unknown",
    NO_EFI_REASON,
  ]);
  assert.equal(s.lockdown, "none");
  assert.deepEqual([s.tpm, s.pcrs, s.db.present], [false, [], false]);
});

Deno.test("Secure Boot on: PK, KEK and db certificates with subjects and fingerprints, hashes counted", async () => {
  const [pk, kek, db] = await Promise.all(["owner PK", "owner KEK", "owner db"].map(selfSigned));
  const fw = new FakeFirmwareBackend()
    .setVariable("SecureBoot", G, Uint8Array.of(1))
    .setVariable("SetupMode", G, Uint8Array.of(0))
    .setVariable("PK", G, buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: pk }]))
    .setVariable("KEK", G, buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: kek }]))
    .setVariable(
      "db",
      EFI_IMAGE_SECURITY_DATABASE_GUID,
      concat(
        buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: db }]),
        buildSignatureList(EFI_CERT_SHA256_GUID, [
          { owner: OWNER, data: new Uint8Array(32) },
          { owner: OWNER, data: new Uint8Array(32).fill(1) },
        ]),
        buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: new Uint8Array(10) }]),
      ),
    );
  fw.lockdownText = "none [integrity] confidentiality\n";
  fw.hasTpm = true;
  fw.pcrs.set(7, "ab".repeat(32));
  const s = await readSecureBootStatus(fw);
  assert.deepEqual([s.efi, s.secureBoot, s.setupMode, s.reason, s.lockdown], [
    true,
    "on",
    "off",
    "",
    "integrity",
  ]);
  assert.deepEqual(s.pk.certificates.map((c) => c.subject), ["CN=owner PK"]);
  assert.deepEqual(s.kek.certificates.map((c) => c.subject), ["CN=owner KEK"]);
  assert.deepEqual(s.db.certificates, [
    { subject: "CN=owner db", sha256: await certificateFingerprint(db), owner: OWNER },
  ]);
  assert.deepEqual([s.db.hashes, s.db.other, s.db.reason], [2, 1, ""]);
  assert.deepEqual([s.tpm, s.pcrs], [true, [{ index: 7, sha256: "ab".repeat(32) }]]);
});

Deno.test("Setup Mode, a malformed db and failing reads become reasons, never throws", async () => {
  const db = buildSignatureList(EFI_CERT_SHA256_GUID, [{ owner: OWNER, data: new Uint8Array(32) }]);
  new DataView(db.buffer).setUint32(16, db.length + 100, true);
  const fw = new FakeFirmwareBackend()
    .setVariable("SetupMode", G, Uint8Array.of(1))
    .setVariable("db", EFI_IMAGE_SECURITY_DATABASE_GUID, db);
  fw.faults.failAlways("efiVariable", "EACCES", (args) => args[0] === "KEK");
  fw.faults.failAlways("lockdown", "EIO");
  fw.faults.failAlways("tpm", "EIO");
  const s = await readSecureBootStatus(fw);
  assert.deepEqual([s.secureBoot, s.setupMode], ["unknown", "on"]);
  assert.match(s.reason, /SecureBoot: the firmware sets no such variable/);
  assert.deepEqual([s.pk.present, s.pk.reason], [false, ""]);
  assert.match(s.kek.reason, /EACCES/);
  assert.deepEqual([s.db.present, s.db.certificates], [true, []]);
  assert.match(s.db.reason, /exceeds/);
  assert.deepEqual([s.lockdown, s.tpm, s.pcrs], ["unknown", false, []]);
});

Deno.test("an oversize db is refused by the backend and reported", async () => {
  const fw = new FakeFirmwareBackend().setVariable(
    "db",
    EFI_IMAGE_SECURITY_DATABASE_GUID,
    new Uint8Array(256 * 1024 + 1),
  );
  const s = await readSecureBootStatus(fw);
  assert.match(s.db.reason, /larger than 262144 bytes/);
});

Deno.test("controller: publishes at start and again on resync (a PCR extended later)", async () => {
  const fw = new FakeFirmwareBackend().setVariable("SecureBoot", G, Uint8Array.of(1));
  fw.hasTpm = true;
  fw.pcrs.set(0, "00".repeat(32));
  const store = new Store<ResourceSpecs>();
  const runtime = new ControllerRuntime(store);
  runtime.register(new SecureBootStatusController({ backend: fw, resyncInterval: 20 }));
  runtime.start();
  try {
    const first = await waitForResource(store, SECURE_BOOT_STATUS, () => true);
    assert.equal(first.metadata.id, "secureboot");
    assert.equal(first.metadata.namespace, "runtime");
    assert.equal(first.spec.secureBoot, "on");
    fw.pcrs.set(0, "11".repeat(32));
    const later = await waitForResource(
      store,
      SECURE_BOOT_STATUS,
      (r) => r.spec.pcrs[0]?.sha256 === "11".repeat(32),
    );
    assert.equal(later.spec.pcrs.length, 1);
  } finally {
    await runtime.stop();
  }
});
