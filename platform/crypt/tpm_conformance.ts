/**
 * One suite for the `tpm` key kind that the fake TPM passes on the fake crypt
 * backend and tpm2-tools passes as root against swtpm on a loop device with
 * real cryptsetup (tpm_tools_root_test.ts): enroll, unseal, refused after
 * PCR 11 changes or on a fresh TPM (the static key still opens), a new signed
 * policy unseals without a reseal, nothing written without a TPM.
 * @module
 */
import assert from "node:assert/strict";
import type { CryptBackend, Pbkdf } from "./backend.ts";
import { TEST_PBKDF } from "./backend_conformance.ts";
import {
  type SignedPcrPolicy,
  type TpmBackend,
  TpmPolicyError,
  TpmUnavailableError,
  UKI_PCR,
} from "./tpm.ts";
import { generatePolicyKey, type PolicyKey, signPcrPolicy } from "./tpm_policy_key.ts";
import { enrollTpmSlot, TPM_TOKEN, unsealTpmSlot } from "./tpm_slot.ts";

/** A TPM, a crypt backend with a device, and the TPM events the suite needs. */
export interface TpmFixture {
  tpm: TpmBackend;
  crypt: CryptBackend;
  device: string;
  /** Extend PCR 11 (a boot of another UKI). */
  extendPcr11(): Promise<void>;
  /** The same board with a fresh TPM state (a cleared or replaced TPM). */
  freshTpm(): Promise<TpmBackend>;
  /** A backend that reaches no TPM. */
  absentTpm(): TpmBackend;
  cleanup(): Promise<void>;
}

/** Options of {@link tpmConformance}. */
export interface TpmConformanceOptions {
  /** Ignore every test (the reason in `name`). */
  ignore?: boolean;
  pbkdf?: Pbkdf;
}

const STATIC = new TextEncoder().encode("static recovery passphrase");
const STATIC_SLOT = 0;
const TPM_SLOT = 1;

const enroll = (f: TpmFixture, k: PolicyKey, tpm = f.tpm) =>
  enrollTpmSlot(f.crypt, tpm, {
    device: f.device,
    slot: TPM_SLOT,
    authKey: STATIC,
    publicKey: k.publicPem,
  });
const signNow = async (f: TpmFixture, k: PolicyKey): Promise<SignedPcrPolicy> =>
  await signPcrPolicy(k.privateKey, new Map([[UKI_PCR, await f.tpm.readPcr(UKI_PCR)]]));
const unseal = (f: TpmFixture, k: PolicyKey, signed: SignedPcrPolicy, tpm = f.tpm) =>
  unsealTpmSlot(f.crypt, tpm, {
    device: f.device,
    slot: TPM_SLOT,
    publicKey: k.publicPem,
    signed,
  });
const staticOpens = async (f: TpmFixture) =>
  assert.equal(await f.crypt.testKey(f.device, STATIC, STATIC_SLOT), true, "the static key");

/** Register the suite's tests under `name`. */
export function tpmConformance(
  name: string,
  make: () => Promise<TpmFixture>,
  options: TpmConformanceOptions = {},
): void {
  const test = (title: string, fn: (f: TpmFixture, key: PolicyKey) => Promise<void>) =>
    Deno.test({
      name: `${name}: ${title}`,
      ignore: options.ignore,
      fn: async () => {
        const f = await make();
        try {
          await f.crypt.format(f.device, STATIC, {
            slot: STATIC_SLOT,
            pbkdf: options.pbkdf ?? TEST_PBKDF,
            label: "STATE",
          });
          await fn(f, await generatePolicyKey());
        } finally {
          await f.cleanup();
        }
      },
    });
  test(
    "an enrolled key unseals under a signed policy for PCR 11 and opens its slot",
    async (f, k) => {
      await enroll(f, k);
      const info = await f.crypt.dump(f.device);
      assert.deepEqual(info.slots.map((s) => s.slot), [STATIC_SLOT, TPM_SLOT]);
      const token = await f.crypt.exportToken(f.device, TPM_SLOT);
      assert.equal(token.type, TPM_TOKEN);
      assert.deepEqual(token.tpm2_pcrs, [UKI_PCR]);
      const key = await unseal(f, k, await signNow(f, k));
      assert.equal(key.length, 32);
      assert.equal(await f.crypt.testKey(f.device, key, TPM_SLOT), true);
    },
  );

  test("PCR 11 extended: refused; a new signed policy unseals without a reseal", async (f, k) => {
    await enroll(f, k);
    const before = await signNow(f, k);
    await f.extendPcr11();
    await assert.rejects(unseal(f, k, before), TpmPolicyError);
    await staticOpens(f);
    // An upgrade: the new UKI's own signed policy, same key, no new seal.
    const key = await unseal(f, k, await signNow(f, k));
    assert.equal(await f.crypt.testKey(f.device, key, TPM_SLOT), true);
  });

  test(
    "extend: PCR 11 ← SHA-256(PCR ‖ SHA-256(word)), and the policy signed before no longer unseals",
    async (f, k) => {
      await enroll(f, k);
      const before = await signNow(f, k);
      const sha = async (b: Uint8Array) =>
        new Uint8Array(await crypto.subtle.digest("SHA-256", b.slice()));
      const word = new TextEncoder().encode("sysinit");
      const want = await sha(new Uint8Array([...await f.tpm.readPcr(UKI_PCR), ...await sha(word)]));
      await f.tpm.extend(UKI_PCR, word);
      assert.deepEqual(await f.tpm.readPcr(UKI_PCR), want);
      await assert.rejects(unseal(f, k, before), TpmPolicyError);
    },
  );

  test("a policy signed by another key is refused", async (f, k) => {
    await enroll(f, k);
    const other = await generatePolicyKey();
    const forged = await signPcrPolicy(
      other.privateKey,
      new Map([[UKI_PCR, await f.tpm.readPcr(UKI_PCR)]]),
    );
    await assert.rejects(unseal(f, k, forged), TpmPolicyError);
  });

  test("a fresh TPM state refuses the sealed key; the static key still opens", async (f, k) => {
    await enroll(f, k);
    const fresh = await f.freshTpm();
    const signed = await signPcrPolicy(
      k.privateKey,
      new Map([[UKI_PCR, await fresh.readPcr(UKI_PCR)]]),
    );
    await assert.rejects(unseal(f, k, signed, fresh), TpmPolicyError);
    await staticOpens(f);
  });

  test("no TPM: enrolling writes nothing and unsealing says so", async (f, k) => {
    const absent = f.absentTpm();
    await assert.rejects(enroll(f, k, absent), TpmUnavailableError);
    assert.deepEqual((await f.crypt.dump(f.device)).slots.map((s) => s.slot), [STATIC_SLOT]);
    await enroll(f, k);
    await assert.rejects(unseal(f, k, await signNow(f, k), absent), TpmUnavailableError);
  });
}
