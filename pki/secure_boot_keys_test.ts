import assert from "node:assert/strict";
import { generateSecureBootKeys, loadSecureBootKeys } from "./secure_boot_keys.ts";
import { x509 } from "./x509_provider.ts";
import { PkiError } from "./pki_error.ts";

Deno.test("Secure Boot keys: PK, KEK and db, RSA-2048 self-signed, read back; a swapped key is refused", async () => {
  const keys = await generateSecureBootKeys("example fleet");
  for (const name of ["PK", "KEK", "db"] as const) {
    const cert = new x509.X509Certificate(keys[name].certPem);
    assert.equal(cert.subject, `O=example fleet, CN=example fleet Secure Boot ${name}`);
    assert.equal((cert.publicKey.algorithm as RsaHashedKeyAlgorithm).modulusLength, 2048);
    assert.ok(await cert.isSelfSigned());
  }
  const files = new Map<string, string>();
  for (const [name, k] of Object.entries(keys)) {
    files.set(`${name}.crt`, k.certPem);
    files.set(`${name}.key`, k.keyPem);
  }
  const read = (f: string) => Promise.resolve(files.get(f) ?? "");
  assert.deepEqual(await loadSecureBootKeys(read), keys);
  files.set("db.key", keys.KEK.keyPem);
  await assert.rejects(
    loadSecureBootKeys(read),
    (e) => e instanceof PkiError && e.kind === "key_mismatch" && /db\.key/.test(e.message),
  );
  files.set("db.key", "garbage");
  await assert.rejects(
    loadSecureBootKeys(read),
    (e) => e instanceof PkiError && e.kind === "invalid",
  );
});
