import assert from "node:assert/strict";
import {
  FakeCryptBackend,
  MemoryTpmPolicy,
  signPcrPolicy,
  TEST_PBKDF,
  TpmPolicyError,
  UKI_PCR,
} from "../../platform/crypt/mod.ts";
import type { LuksVolume } from "./luks_volume.ts";
import { TestTpm } from "./testing_tpm.ts";
import {
  closeTpmUnseal,
  enrollTpmKey,
  TPM_CLOSING_PHASE,
  TpmNotUsableError,
  unsealTpmKey,
} from "./tpm_keys.ts";

const STATIC = new TextEncoder().encode("static recovery passphrase");

async function volume(tpm?: TestTpm): Promise<LuksVolume> {
  const crypt = new FakeCryptBackend();
  await crypt.format("/dev/vda2", STATIC, { slot: 0, pbkdf: TEST_PBKDF, label: "STATE" });
  return {
    crypt,
    keys: { smbiosUuid: () => Promise.reject(new Error("no UUID")), ...(tpm ? { tpm } : {}) },
    volume: "STATE",
    device: "/dev/vda2",
  };
}

Deno.test("unseal picks the boot's signed policy that matches PCR 11 now (one per boot phase)", async () => {
  const tpm = await TestTpm.create();
  const v = await volume(tpm);
  assert.equal(await enrollTpmKey(v, 1, STATIC), undefined);
  const key = tpm.key.privateKey;
  const enter = await signPcrPolicy(key, new Map([[UKI_PCR, await tpm.tpm.readPcr(UKI_PCR)]]));
  await tpm.tpm.extend(UKI_PCR, new TextEncoder().encode("leave-initrd"));
  const leave = await signPcrPolicy(key, new Map([[UKI_PCR, await tpm.tpm.readPcr(UKI_PCR)]]));
  tpm.policy = new MemoryTpmPolicy(tpm.key.publicPem, [enter, leave]);
  const k = await unsealTpmKey(v, 1);
  assert.equal(await v.crypt.testKey(v.device, k, 1), true);
  tpm.policy = new MemoryTpmPolicy(tpm.key.publicPem, [enter]);
  await assert.rejects(unsealTpmKey(v, 1), TpmPolicyError);
});

Deno.test("no TPM: enroll says why and writes nothing; unseal throws TpmNotUsableError", async () => {
  const tpm = await TestTpm.create();
  tpm.missing = "no TPM device (/dev/tpmrm0)";
  const v = await volume(tpm);
  assert.equal(await enrollTpmKey(v, 1, STATIC), "no TPM device (/dev/tpmrm0)");
  assert.deepEqual((await v.crypt.dump(v.device)).slots.map((s) => s.slot), [0]);
  await assert.rejects(unsealTpmKey(v, 1), TpmNotUsableError);
  const none = await volume();
  assert.equal(await enrollTpmKey(none, 1, STATIC), "this node has no TPM backend");
});

Deno.test("a TPM that answers with no device behind it (absent fake) is a reason, not a crash", async () => {
  const tpm = await TestTpm.create();
  tpm.tpm.present = false;
  const v = await volume(tpm);
  assert.match((await enrollTpmKey(v, 1, STATIC)) ?? "", /No TPM answers/);
  assert.deepEqual((await v.crypt.dump(v.device)).slots.map((s) => s.slot), [0]);
});

Deno.test("closing extends PCR 11 with sysinit: the boot's policy no longer unseals; no TPM is a reason, not a throw", async () => {
  const tpm = await TestTpm.create();
  const v = await volume(tpm);
  assert.equal(await enrollTpmKey(v, 1, STATIC), undefined);
  assert.equal(await v.crypt.testKey(v.device, await unsealTpmKey(v, 1), 1), true);
  assert.equal(TPM_CLOSING_PHASE, "sysinit");
  assert.equal(await closeTpmUnseal(tpm), undefined);
  await assert.rejects(unsealTpmKey(v, 1), TpmPolicyError);
  assert.equal(await closeTpmUnseal(undefined), "this node has no TPM backend");
  tpm.missing = "no TPM device (/dev/tpmrm0)";
  assert.equal(await closeTpmUnseal(tpm), "no TPM device (/dev/tpmrm0)");
  tpm.missing = undefined;
  tpm.tpm.present = false;
  assert.match((await closeTpmUnseal(tpm))!, /No TPM answers/);
});
