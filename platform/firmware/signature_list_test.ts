import assert from "node:assert/strict";
import { join } from "node:path";
import { x509 } from "../../pki/mod.ts";
import { EFI_CERT_SHA256_GUID, EFI_CERT_X509_GUID, guidAt, guidBytes } from "./guid.ts";
import {
  buildSignatureList,
  MAX_SIGNATURE_DATABASE_BYTES,
  parseSignatureLists,
  SignatureListError,
} from "./signature_list.ts";

const OWNER = "11112222-3333-4444-5555-666677778888";

Deno.test("guid: mixed-endian bytes round-trip", () => {
  const b = guidBytes(EFI_CERT_X509_GUID);
  assert.deepEqual(Array.from(b.subarray(0, 4)), [0xa1, 0x59, 0xc0, 0xa5]);
  assert.equal(guidAt(b, 0), EFI_CERT_X509_GUID);
  assert.throws(() => guidBytes("not-a-guid"), TypeError);
  assert.throws(() => guidAt(b, 1), RangeError);
});

Deno.test("signature lists: an X.509 list and a SHA-256 list back to back", () => {
  const cert = Uint8Array.from({ length: 40 }, (_, i) => i);
  const hashes = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
  const db = concat(
    buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: cert }]),
    buildSignatureList(EFI_CERT_SHA256_GUID, hashes.map((data) => ({ owner: OWNER, data }))),
  );
  const sigs = parseSignatureLists(db);
  assert.deepEqual(sigs.map((s) => s.type), [
    EFI_CERT_X509_GUID,
    EFI_CERT_SHA256_GUID,
    EFI_CERT_SHA256_GUID,
  ]);
  assert.ok(sigs.every((s) => s.owner === OWNER));
  assert.deepEqual(sigs[0].data, cert);
  assert.deepEqual(sigs[2].data, hashes[1]);
  assert.deepEqual(parseSignatureLists(new Uint8Array()), []);
});

Deno.test("signature lists: a type-specific header is skipped", () => {
  const list = buildSignatureList(EFI_CERT_SHA256_GUID, [{
    owner: OWNER,
    data: new Uint8Array(32),
  }]);
  const withHeader = new Uint8Array(list.length + 8);
  withHeader.set(list.subarray(0, 28));
  withHeader.set(list.subarray(28), 36);
  const v = new DataView(withHeader.buffer);
  v.setUint32(16, withHeader.length, true);
  v.setUint32(20, 8, true);
  assert.equal(parseSignatureLists(withHeader).length, 1);
});

Deno.test("signature lists: inconsistent sizes and oversize input are refused", () => {
  const good = buildSignatureList(EFI_CERT_SHA256_GUID, [{
    owner: OWNER,
    data: new Uint8Array(32),
  }]);
  const bad = (edit: (v: DataView) => void) => {
    const b = good.slice();
    edit(new DataView(b.buffer));
    return b;
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ["truncated", good.subarray(0, 20), /Truncated/],
    ["list past the end", bad((v) => v.setUint32(16, good.length + 1, true)), /exceeds/],
    ["list shorter than its header", bad((v) => v.setUint32(16, 10, true)), /exceeds|smaller/],
    ["zero list size", bad((v) => v.setUint32(16, 0, true)), /smaller/],
    ["zero signature size", bad((v) => v.setUint32(24, 0, true)), /holds no data/],
    ["ragged signatures", bad((v) => v.setUint32(24, 47, true)), /not a multiple/],
    ["header past the list", bad((v) => v.setUint32(20, 4, true)), /not a multiple|smaller/],
  ];
  for (const [what, bytes, message] of cases) {
    assert.throws(() => parseSignatureLists(bytes), (e: unknown) => {
      assert.ok(e instanceof SignatureListError, what);
      assert.match(e.message, message, what);
      return true;
    });
  }
  const huge = new Uint8Array(MAX_SIGNATURE_DATABASE_BYTES + 1);
  assert.throws(() => parseSignatureLists(huge), /exceeds 262144/);
});

function hasTool(name: string): boolean {
  try {
    return new Deno.Command(name, { args: ["--help"], stdout: "null", stderr: "null" })
      .outputSync() !== undefined;
  } catch {
    return false;
  }
}

Deno.test({
  name: "signature lists: what efitools' cert-to-efi-sig-list writes (needs efitools)",
  ignore: !hasTool("cert-to-efi-sig-list"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "esl-" });
    try {
      const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
      const keys = await crypto.subtle.generateKey(alg, false, ["sign", "verify"]);
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: "01",
        name: "CN=test db",
        keys,
        signingAlgorithm: alg,
      });
      await Deno.writeTextFile(join(dir, "db.crt"), cert.toString("pem"));
      const out = await new Deno.Command("cert-to-efi-sig-list", {
        args: ["-g", OWNER, join(dir, "db.crt"), join(dir, "db.esl")],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const esl = await Deno.readFile(join(dir, "db.esl"));
      const [sig, ...rest] = parseSignatureLists(esl);
      assert.equal(rest.length, 0);
      assert.equal(sig.type, EFI_CERT_X509_GUID);
      assert.equal(sig.owner, OWNER);
      assert.deepEqual(sig.data, new Uint8Array(cert.rawData));
      const ours = buildSignatureList(EFI_CERT_X509_GUID, [{ owner: OWNER, data: sig.data }]);
      assert.deepEqual(ours, esl);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}
