/**
 * A `tpm` keyslot of a LUKS2 header: a random 32-byte key in the slot, the
 * TPM's sealed copy of it in the slot's `machined-tpm` token (public and
 * private blobs, the PCRs, the policy key's fingerprint: nothing that opens
 * the volume without that TPM and a signed policy). So, like every kind, the
 * header alone says how to open it, before any config is read.
 * @module
 */
import { type CryptBackend, type LuksToken, MACHINE_KEY_PBKDF, TOKEN_PREFIX } from "./backend.ts";
import {
  type PolicyPublicKeyPem,
  type SealedKey,
  type SignedPcrPolicy,
  type TpmBackend,
  UKI_PCR,
} from "./tpm.ts";

/** The token type of a `tpm` slot. */
export const TPM_TOKEN = `${TOKEN_PREFIX}tpm`;

/** A token that does not hold a sealed key (not ours, or damaged). */
export class TpmTokenError extends Error {
  override name = "TpmTokenError";
  constructor(readonly device: string, readonly slot: number, detail: string) {
    super(`The ${TPM_TOKEN} token of slot ${slot} on "${device}" ${detail}`);
  }
}

/**
 * Seal a new random key for `slot` (PCR 11 by default), add it authorised by
 * `authKey`, then write its token. The TPM goes first: without one, nothing
 * is written to the header.
 * @throws TpmUnavailableError, KeyRejectedError (authKey opens no slot)
 */
export async function enrollTpmSlot(
  crypt: CryptBackend,
  tpm: TpmBackend,
  o: {
    device: string;
    slot: number;
    authKey: Uint8Array;
    publicKey: PolicyPublicKeyPem;
    pcrs?: readonly number[];
  },
): Promise<void> {
  const key = crypto.getRandomValues(new Uint8Array(32));
  try {
    const sealed = await tpm.seal(key, o.publicKey, o.pcrs ?? [UKI_PCR]);
    // A random key: a slow derivation would add nothing (backend.ts, MACHINE_KEY_PBKDF).
    await crypt.addKey(o.device, o.authKey, key, o.slot, MACHINE_KEY_PBKDF);
    await crypt.importToken(o.device, o.slot, tpmToken(o.slot, sealed));
  } finally {
    key.fill(0);
  }
}

/**
 * The key of `slot` unsealed by the TPM with `signed` (the running UKI's
 * signed PCR policy). Maps nothing: the caller tests or opens with it.
 * @throws TpmTokenError, TpmUnavailableError, TpmPolicyError
 */
export async function unsealTpmSlot(
  crypt: CryptBackend,
  tpm: TpmBackend,
  o: { device: string; slot: number; publicKey: PolicyPublicKeyPem; signed: SignedPcrPolicy },
): Promise<Uint8Array> {
  const token = await crypt.exportToken(o.device, o.slot).catch((e) => {
    if (e instanceof RangeError) throw new TpmTokenError(o.device, o.slot, "is missing");
    throw e;
  });
  return await tpm.unseal(sealedFromToken(o.device, o.slot, token), o.publicKey, o.signed);
}

/** The token of a sealed key. Pure. */
export function tpmToken(slot: number, s: SealedKey): LuksToken {
  return {
    type: TPM_TOKEN,
    keyslots: [slot],
    tpm2_public: b64(s.public),
    tpm2_private: b64(s.private),
    tpm2_pcrs: [...s.pcrs],
    policy_key_sha256: s.keyFingerprint,
  };
}

/** The sealed key a token holds. Pure. @throws TpmTokenError */
export function sealedFromToken(device: string, slot: number, t: LuksToken): SealedKey {
  if (t.type !== TPM_TOKEN) throw new TpmTokenError(device, slot, `is "${t.type}"`);
  const { tpm2_public: pub, tpm2_private: priv, tpm2_pcrs: pcrs, policy_key_sha256: fp } = t;
  if (typeof pub !== "string" || typeof priv !== "string" || typeof fp !== "string") {
    throw new TpmTokenError(device, slot, "lacks its sealed blobs or policy key");
  }
  if (!Array.isArray(pcrs) || !pcrs.every((p) => Number.isInteger(p))) {
    throw new TpmTokenError(device, slot, "lacks its PCR list");
  }
  try {
    return { public: unb64(pub), private: unb64(priv), pcrs, keyFingerprint: fp };
  } catch {
    throw new TpmTokenError(device, slot, "holds blobs that are not base64");
  }
}

function b64(b: Uint8Array): string {
  return btoa(String.fromCharCode(...b));
}

function unb64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}
