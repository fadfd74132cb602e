import assert from "node:assert/strict";
import { FakeCryptBackend } from "./backend_fake.ts";
import { pcrPolicyDigest, UKI_PCR } from "./tpm.ts";
import { tpmConformance } from "./tpm_conformance.ts";
import { FakeTpmBackend } from "./tpm_fake.ts";
import { sealedFromToken, tpmToken, TpmTokenError } from "./tpm_slot.ts";

tpmConformance("FakeTpmBackend", () => {
  const tpm = new FakeTpmBackend();
  return Promise.resolve({
    tpm,
    crypt: new FakeCryptBackend(),
    device: "/dev/fake0",
    extendPcr11: () => tpm.extend(UKI_PCR, new TextEncoder().encode("another UKI")),
    freshTpm: () => {
      const fresh = new FakeTpmBackend();
      return Promise.resolve(fresh);
    },
    absentTpm: () => Object.assign(new FakeTpmBackend(), { present: false }),
    cleanup: () => Promise.resolve(),
  });
});

const hex = (s: string) => Uint8Array.from(s.match(/../g)!, (h) => parseInt(h, 16));

Deno.test("pcrPolicyDigest is TPM2_PolicyPCR's digest (as tpm2_policypcr computed it)", async () => {
  // Computed by tpm2-tools 5.4 (`tpm2_policypcr -l sha256:11 -f pcr11.bin`) against swtpm.
  const pcr11 = hex("e1f9da91ffc3548e8c8f5df2a4dc165c719cb69a0300d58aeebbcd55a18540d7");
  const policy = await pcrPolicyDigest(new Map([[11, pcr11]]));
  assert.deepEqual(
    policy,
    hex("ddc50ecaa8a4ff6fb46057887e1eba65b9d71fee4381a864e75d2c7cffe8157e"),
  );
  await assert.rejects(pcrPolicyDigest(new Map()), RangeError);
  await assert.rejects(pcrPolicyDigest(new Map([[24, pcr11]])), RangeError);
  await assert.rejects(pcrPolicyDigest(new Map([[11, new Uint8Array(20)]])), RangeError);
});

Deno.test("a machined-tpm token round-trips its sealed key and refuses what is not one", () => {
  const sealed = {
    public: Uint8Array.of(1, 2, 3),
    private: Uint8Array.of(4, 5),
    pcrs: [11],
    keyFingerprint: "ab".repeat(32),
  };
  const t = tpmToken(3, sealed);
  assert.deepEqual(t.keyslots, [3]);
  assert.deepEqual(sealedFromToken("/dev/x", 3, t), sealed);
  assert.throws(
    () => sealedFromToken("/dev/x", 3, { ...t, type: "machined-static" }),
    TpmTokenError,
  );
  assert.throws(() => sealedFromToken("/dev/x", 3, { ...t, tpm2_public: 7 }), TpmTokenError);
  assert.throws(() => sealedFromToken("/dev/x", 3, { ...t, tpm2_pcrs: "11" }), TpmTokenError);
  assert.throws(() => sealedFromToken("/dev/x", 3, { ...t, tpm2_private: "%%" }), TpmTokenError);
});
