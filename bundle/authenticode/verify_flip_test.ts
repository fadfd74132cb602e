import assert from "node:assert/strict";
import { authenticodeDigest, AuthenticodeError, verifyAuthenticode } from "./mod.ts";
import { readPeImage } from "./pe_image.ts";
import { EFI_STUB, makeOwner, sbsign, SIGNING_MISSING } from "./testing.ts";

Deno.test({
  name: `every single-byte change to the headers or the signature is refused or harmless (${
    SIGNING_MISSING ?? "needs sbsigntool"
  })`,
  ignore: SIGNING_MISSING !== undefined,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const acme = await makeOwner(dir, "acme");
    const signed = await sbsign(acme, await Deno.readFile(EFI_STUB));
    const db = [{ certPem: acme.keys.db.certPem }];
    const image = readPeImage(signed);
    const digest = authenticodeDigest(signed).sha256;
    const offsets = [
      ...Array.from({ length: image.sizeOfHeaders }, (_, i) => i),
      ...Array.from({ length: image.certTable!.size }, (_, i) => image.certTable!.offset + i),
    ];
    const reasons = new Map<string, number>();
    for (const at of offsets) {
      const changed = signed.slice();
      changed[at] ^= 0x10;
      let reason = "ok";
      try {
        const v = await verifyAuthenticode(changed, db);
        // Accepted: only where nothing the signature binds changed (CheckSum, unsigned fields).
        assert.deepEqual(v.digest, digest, `byte ${at} changed the hash yet was accepted`);
      } catch (e) {
        assert.ok(e instanceof AuthenticodeError, `byte ${at}: ${e}`);
        reason = e.reason;
      }
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    // Most changes are refused; each refusal is one of the typed reasons.
    assert.ok((reasons.get("ok") ?? 0) < offsets.length / 4, JSON.stringify([...reasons]));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
