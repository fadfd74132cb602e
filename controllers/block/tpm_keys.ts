/**
 * `tpm` key slots of a machined volume: sealing a new slot's key at format
 * and unsealing it at unlock, through the node's {@link TpmKeys} (the TPM,
 * the policy-signing key and this boot's signed PCR 11 policies). A `tpm`
 * slot is always an extra beside a key machined derives itself (validation
 * refuses a volume whose keys are all `tpm`), so a TPM that is absent or
 * refuses is a reason to report and a fallback to the other keys, never a
 * failure of the volume.
 * @module
 */
import {
  enrollTpmSlot,
  pcrPolicyDigest,
  type SignedPcrPolicy,
  type TpmKeys,
  TpmPolicyError,
  UKI_PCR,
  unsealTpmSlot,
} from "../../platform/crypt/mod.ts";
import type { LuksVolume } from "./luks_volume.ts";

/** This node cannot use a TPM now (no backend, no device, no tools). */
export class TpmNotUsableError extends Error {
  override name = "TpmNotUsableError";
}

async function usable(v: LuksVolume): Promise<TpmKeys> {
  const t = v.keys.tpm;
  if (!t) throw new TpmNotUsableError("this node has no TPM backend");
  const why = await t.unavailable();
  if (why) throw new TpmNotUsableError(why);
  return t;
}

/**
 * Seal a new random key into `slot`, added with `authKey` (a key that opens
 * the header), its sealed copy in the slot's `machined-tpm` token. Never
 * throws: resolves undefined when enrolled, or why the slot was skipped
 * (nothing written to the header in that case, unless the add itself failed).
 */
export async function enrollTpmKey(
  v: LuksVolume,
  slot: number,
  authKey: Uint8Array,
): Promise<string | undefined> {
  try {
    const t = await usable(v);
    const publicKey = await t.policy.publicKey();
    await enrollTpmSlot(v.crypt, t.tpm, { device: v.device, slot, authKey, publicKey });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Why this node cannot seal a `tpm` slot now and prove it by unsealing in
 * this boot (no TPM, no tools, no policy-signing key, no signed policy for
 * PCR 11's value now, PCR 11 already closed), or undefined when it can.
 * Reads the TPM and the policy; writes nothing. Never throws.
 */
export async function tpmSealReadiness(v: LuksVolume): Promise<string | undefined> {
  try {
    const t = await usable(v);
    await t.policy.publicKey();
    await currentPolicy(t);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Seal and add a `tpm` slot the header lacks (a later boot's add of a slot
 * skipped at format), authorised by `authKey`, then prove it: the TPM
 * unseals its key and that key opens the slot. A slot that was written but
 * not proven is killed again (`slot` was free before: it is only ever the
 * one just added), so the header ends as it was. Never throws: resolves
 * undefined when added and proven, or why not.
 */
export async function addTpmKey(
  v: LuksVolume,
  slot: number,
  authKey: Uint8Array,
): Promise<string | undefined> {
  const why = await enrollTpmKey(v, slot, authKey) ?? await proveTpmKey(v, slot);
  if (why === undefined) return undefined;
  try {
    const active = (await v.crypt.dump(v.device)).slots.some((s) => s.slot === slot);
    if (active) await v.crypt.killSlot(v.device, slot);
    return active ? `${why} (the unproven slot was removed again)` : why;
  } catch (e) {
    return `${why}; removing the unproven slot failed: ${(e as Error).message}`;
  }
}

async function proveTpmKey(v: LuksVolume, slot: number): Promise<string | undefined> {
  let key: Uint8Array | undefined;
  try {
    key = await unsealTpmKey(v, slot);
    const opens = await v.crypt.testKey(v.device, key, slot);
    return opens ? undefined : "sealed, but the unsealed key does not open its slot";
  } catch (e) {
    return `sealed, but not proven: ${(e as Error).message}`;
  } finally {
    key?.fill(0);
  }
}

/**
 * The key of `slot`, unsealed by the TPM under this boot's signed policy for
 * PCR 11's current value. Maps nothing.
 * @throws TpmNotUsableError, TpmPolicyMissingError, TpmPolicyError,
 *   TpmTokenError, TpmUnavailableError
 */
export async function unsealTpmKey(v: LuksVolume, slot: number): Promise<Uint8Array> {
  const t = await usable(v);
  const publicKey = await t.policy.publicKey();
  const signed = await currentPolicy(t);
  return await unsealTpmSlot(v.crypt, t.tpm, { device: v.device, slot, publicKey, signed });
}

/**
 * The boot phase machined extends into PCR 11 once the boot's volumes are
 * open and before any service starts (systemd's word for that point): the
 * UKI's policy is signed for the phase before it, so no later process, and
 * no service, can unseal a `tpm` key in this boot.
 */
export const TPM_CLOSING_PHASE = "sysinit";

/**
 * Extend PCR 11 with {@link TPM_CLOSING_PHASE}. Never throws: resolves
 * undefined when extended, or why not (no TPM on this node: nothing to close).
 */
export async function closeTpmUnseal(keys: TpmKeys | undefined): Promise<string | undefined> {
  try {
    if (!keys) return "this node has no TPM backend";
    const why = await keys.unavailable();
    if (why) return why;
    await keys.tpm.extend(UKI_PCR, new TextEncoder().encode(TPM_CLOSING_PHASE));
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The boot's signed policy whose digest matches PCR 11 now (one per boot phase). */
async function currentPolicy(t: TpmKeys): Promise<SignedPcrPolicy> {
  const policies = await t.policy.signedPolicies();
  const now = await pcrPolicyDigest(new Map([[UKI_PCR, await t.tpm.readPcr(UKI_PCR)]]));
  const match = policies.find((p) =>
    p.pcrs.length === 1 && p.pcrs[0] === UKI_PCR && equal(p.policy, now)
  );
  if (!match) {
    throw new TpmPolicyError(
      "PCR policy",
      `none of this boot's ${policies.length} signed policies matches PCR ${UKI_PCR}'s value now`,
    );
  }
  return match;
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
