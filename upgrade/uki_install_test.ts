/**
 * Secure Boot bundles on a UKI-booted node (issue 28): the UKIs are checked
 * against the enrolled db (Authenticode, real sbsign signatures) and their
 * signed command lines against the target slot and the bundle's root image,
 * all before the ESP opens for writing; a good bundle installs the target's
 * UKI and root image under an entry that only names the UKI.
 */
import assert from "node:assert/strict";
import { createHash, X509Certificate } from "node:crypto";
import { BundleError, hostCompatible, MAX_UKI_BYTES } from "../bundle/mod.ts";
import type { DbCertificate } from "../bundle/authenticode/mod.ts";
import { makeOwner, type Owner, sbsign, SIGNING_MISSING } from "../bundle/authenticode/testing.ts";
import { buildUki } from "../imager/mod.ts";
import type { FakeEspBackend } from "../platform/esp/mod.ts";
import {
  buildSignatureList,
  EFI_CERT_X509_GUID,
  EFI_IMAGE_SECURITY_DATABASE_GUID,
  FakeFirmwareBackend,
} from "../platform/firmware/mod.ts";
import { toRefusal } from "./refusal.ts";
import { installBundle } from "./slot_writer.ts";
import { chunked, testBundle, testKeys, ukiEsp } from "./testing.ts";
import { checkSlotUki, enrolledDb } from "./uki_check.ts";

const STUB = "/usr/lib/systemd/boot/efi/linuxx64.efi.stub";
const ROOT = new TextEncoder().encode("root image of 2.0.0 ".repeat(400));
const ROOT_SHA = createHash("sha256").update(ROOT).digest("hex");

/** A UKI for `slot` with `cmdline` (default: the slot's word and this root's hash), signed by `owner`. */
async function signedUki(owner: Owner, slot: "A" | "B", cmdline?: string): Promise<Uint8Array> {
  const uki = buildUki({
    stub: await Deno.readFile(STUB),
    kernel: new Uint8Array(200_000).map((_, i) => i * 13),
    initramfs: new Uint8Array(40_000).fill(7),
    cmdline: cmdline ?? `console=ttyS0 machined.slot=${slot} machined.root.sha256=${ROOT_SHA}`,
    osRelease: "ID=machined\nVERSION_ID=2.0.0\n",
  });
  return await sbsign(owner, uki);
}

async function fixture(signedBy: "owner" | "stranger" = "owner") {
  const tmp = await Deno.makeTempDir();
  const owner = await makeOwner(tmp, "owner");
  const signer = signedBy === "owner" ? owner : await makeOwner(tmp, "stranger");
  const k = await testKeys();
  const db: DbCertificate[] = [{ certPem: owner.keys.db.certPem }];
  const esp = ukiEsp();
  const deps = {
    esp,
    booted: "A" as const,
    keys: [k.trusted],
    machine: hostCompatible(),
    checkHeld: (
      name: string,
      bytes: Uint8Array,
      m: Parameters<typeof checkSlotUki>[2]["manifest"],
    ) => checkSlotUki(name, bytes, { manifest: m, db }),
  };
  const bundle = async (ukis?: Uint8Array[]) =>
    await testBundle({
      key: k.signing,
      version: "2.0.0",
      boot: "uki",
      files: [
        ...(ukis ?? [await signedUki(signer, "A"), await signedUki(signer, "B")]),
        ROOT,
      ],
    });
  return { tmp, owner, signer, esp, deps, bundle };
}

function snapshot(esp: FakeEspBackend): Map<string, string> {
  return new Map([...esp.files].map(([p, b]) => [p, createHash("sha256").update(b).digest("hex")]));
}

Deno.test({
  name: "a Secure Boot bundle installs the target's signed UKI and root under an efi entry",
  ignore: SIGNING_MISSING !== undefined,
}, async () => {
  const f = await fixture();
  try {
    const b = await f.bundle();
    const r = await installBundle(chunked(b.bytes, 64 << 10), f.deps);
    assert.equal(r.plan.target, "B");
    assert.deepEqual(f.esp.files.get("/B/machined.efi"), b.files[1], "B's UKI, not A's");
    assert.deepEqual(f.esp.files.get("/B/root.img"), ROOT);
    const entry = new TextDecoder().decode(f.esp.files.get("/loader/entries/machined-b+3.conf"));
    assert.match(entry, /^efi \/B\/machined\.efi$/m);
    assert.doesNotMatch(entry, /^options|^linux/m);
    assert.deepEqual([...f.esp.files.keys()].filter((p) => p.endsWith(".new")), []);
  } finally {
    await Deno.remove(f.tmp, { recursive: true });
  }
});

Deno.test({
  name: "UKIs another owner signed are refused (untrusted-uki, PermissionDenied) before any write",
  ignore: SIGNING_MISSING !== undefined,
}, async () => {
  const f = await fixture("stranger");
  try {
    const before = snapshot(f.esp);
    const refused = await installBundle(chunked((await f.bundle()).bytes, 64 << 10), f.deps)
      .catch((e) => e);
    assert.ok(
      refused instanceof BundleError && refused.reason === "untrusted-uki",
      String(refused),
    );
    assert.match(refused.message, /machined-a\.efi: .*untrusted-signer|not trusted|db/i);
    assert.equal(toRefusal(refused)?.code, "permission-denied");
    assert.equal(f.esp.writeSessions, 0, "the ESP never opened for writing");
    assert.deepEqual(snapshot(f.esp), before);
  } finally {
    await Deno.remove(f.tmp, { recursive: true });
  }
});

Deno.test({
  name: "a signed UKI naming another slot or another root is refused (bad-uki) before any write",
  ignore: SIGNING_MISSING !== undefined,
}, async () => {
  const f = await fixture();
  try {
    const cases: [string, Uint8Array[], RegExp][] = [
      ["B's UKI booting slot A", [
        await signedUki(f.owner, "A"),
        await signedUki(f.owner, "B", `machined.slot=A machined.root.sha256=${ROOT_SHA}`),
      ], /machined-b\.efi's signed command line names slot A, not B/],
      ["another root", [
        await signedUki(f.owner, "A", `machined.slot=A machined.root.sha256=${"0".repeat(64)}`),
        await signedUki(f.owner, "B"),
      ], /names root machined\.root\.sha256=0000/],
    ];
    for (const [what, ukis, message] of cases) {
      const refused = await installBundle(chunked((await f.bundle(ukis)).bytes, 64 << 10), f.deps)
        .catch((e) => e);
      assert.ok(
        refused instanceof BundleError && refused.reason === "bad-uki",
        `${what}: ${refused}`,
      );
      assert.match(refused.message, message, what);
      assert.equal(toRefusal(refused)?.code, "invalid-argument");
    }
    assert.equal(f.esp.writeSessions, 0);
  } finally {
    await Deno.remove(f.tmp, { recursive: true });
  }
});

Deno.test({
  name:
    "without an enrolled db every UKI bundle is refused; the db is read from the firmware's db variable",
  ignore: SIGNING_MISSING !== undefined,
}, async () => {
  const f = await fixture();
  try {
    const b = await f.bundle();
    const refused = await installBundle(chunked(b.bytes, 64 << 10), {
      ...f.deps,
      checkHeld: undefined,
    })
      .catch((e) => e);
    assert.ok(
      refused instanceof BundleError && refused.reason === "untrusted-uki",
      String(refused),
    );
    assert.equal(f.esp.writeSessions, 0);

    assert.deepEqual(await enrolledDb(new FakeFirmwareBackend()), []);
    const der = new Uint8Array(new X509Certificate(f.owner.keys.db.certPem).raw);
    const fw = new FakeFirmwareBackend().setVariable(
      "db",
      EFI_IMAGE_SECURITY_DATABASE_GUID,
      buildSignatureList(EFI_CERT_X509_GUID, [{ owner: EFI_CERT_X509_GUID, data: der }]),
    );
    const db = await enrolledDb(fw);
    assert.equal(db.length, 1);
    await checkSlotUki("machined-b.efi", b.files[1], { manifest: b.manifest, db });
  } finally {
    await Deno.remove(f.tmp, { recursive: true });
  }
});

Deno.test("a Secure Boot bundle promising a UKI past MAX_UKI_BYTES is refused at the head (bad-manifest), no write session", async () => {
  const k = await testKeys();
  const esp = ukiEsp();
  const small = new Uint8Array(10);
  const b = await testBundle({
    key: k.signing,
    boot: "uki",
    files: [small, small, ROOT],
    unchecked: true,
    edit: (m) => (m.files[0].size = MAX_UKI_BYTES + 1),
  });
  const refused = await installBundle(chunked(b.bytes, 4096), {
    esp,
    booted: "A",
    keys: [k.trusted],
    machine: hostCompatible(),
  }).catch((e) => e);
  assert.ok(refused instanceof BundleError && refused.reason === "bad-manifest", String(refused));
  assert.match(refused.message, /a UKI is at most 67108864 bytes/);
  assert.equal(toRefusal(refused)?.code, "invalid-argument");
  assert.equal(esp.writeSessions, 0);
});
