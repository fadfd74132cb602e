/**
 * FakeTpmBackend: a TPM simulated in memory, with the refusals the real one
 * gives (tpm_conformance.ts holds both to the same suite). Seeders and
 * inspectors: {@link FakeTpmBackend.extend} (what a boot of another UKI does
 * to PCR 11), {@link FakeTpmBackend.clear} (a new storage seed: blobs sealed
 * before no longer load), `present = false` (no TPM answers).
 *
 * A sealed blob is the key XORed with a pad derived from the seed, tagged
 * with the seed, so a blob from another seed is refused at load as the real
 * TPM refuses it. Signatures are verified for real (WebCrypto RSASSA-PKCS1-v1_5).
 * @module
 */
import { checkSigned } from "./tpm_tools.ts";
import {
  pcrPolicyDigest,
  type PolicyPublicKeyPem,
  publicKeyFingerprint,
  type SealedKey,
  type SignedPcrPolicy,
  type TpmBackend,
  TpmPolicyError,
  TpmUnavailableError,
} from "./tpm.ts";

/** The fake. */
export class FakeTpmBackend implements TpmBackend {
  /** False: every call fails as with no TPM device. */
  present = true;
  readonly #pcrs = new Map<number, Uint8Array>();
  #seed = crypto.getRandomValues(new Uint8Array(32));

  /** PCR `index` ← SHA-256(PCR ‖ `data`), as TPM2_PCR_Extend with a SHA-256 digest. */
  async extend(index: number, data: Uint8Array): Promise<void> {
    if (!this.present) throw new TpmUnavailableError("fake");
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data.slice()));
    const next = new Uint8Array(64);
    next.set(this.#pcr(index));
    next.set(digest, 32);
    this.#pcrs.set(index, new Uint8Array(await crypto.subtle.digest("SHA-256", next)));
  }

  /** TPM2_Clear: a new storage seed, PCRs reset. */
  clear(): void {
    this.#seed = crypto.getRandomValues(new Uint8Array(32));
    this.#pcrs.clear();
  }

  seal(
    key: Uint8Array,
    publicKey: PolicyPublicKeyPem,
    pcrs: readonly number[],
  ): Promise<SealedKey> {
    return this.#available(async () => {
      const pad = await this.#pad(key.length);
      return {
        public: this.#seed.slice(),
        private: key.map((b, i) => b ^ pad[i]),
        pcrs: [...pcrs],
        keyFingerprint: await publicKeyFingerprint(publicKey),
      };
    });
  }

  unseal(
    sealed: SealedKey,
    publicKey: PolicyPublicKeyPem,
    signed: SignedPcrPolicy,
  ): Promise<Uint8Array> {
    return this.#available(async () => {
      await checkSigned(sealed, publicKey, signed);
      if (!await verify(publicKey, signed)) {
        throw new TpmPolicyError(
          "the signature",
          "the signed PCR policy is not the enrolled key's",
        );
      }
      if (!equal(sealed.public, this.#seed)) {
        throw new TpmPolicyError(
          "load",
          "this TPM did not seal the key (another board, a cleared TPM)",
        );
      }
      const now = await pcrPolicyDigest(new Map(signed.pcrs.map((p) => [p, this.#pcr(p)])));
      if (!equal(now, signed.policy)) {
        throw new TpmPolicyError(
          "PCR policy",
          `PCR ${signed.pcrs.join(",")} does not hold the signed value`,
        );
      }
      const pad = await this.#pad(sealed.private.length);
      return sealed.private.map((b, i) => b ^ pad[i]);
    });
  }

  readPcr(index: number): Promise<Uint8Array> {
    return this.#available(() => Promise.resolve(this.#pcr(index).slice()));
  }

  #pcr(index: number): Uint8Array {
    return this.#pcrs.get(index) ?? new Uint8Array(32);
  }

  async #pad(length: number): Promise<Uint8Array> {
    const out = new Uint8Array(length);
    for (let at = 0, n = 0; at < length; n++) {
      const block = new Uint8Array(
        await crypto.subtle.digest("SHA-256", Uint8Array.of(...this.#seed, n)),
      );
      out.set(block.subarray(0, Math.min(32, length - at)), at);
      at += 32;
    }
    return out;
  }

  async #available<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.present) throw new TpmUnavailableError("fake");
    return await fn();
  }
}

async function verify(pem: PolicyPublicKeyPem, signed: SignedPcrPolicy): Promise<boolean> {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey(
    "spki",
    der,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  ).catch(() => undefined);
  if (!key) return false;
  return await crypto.subtle.verify(
    "RSASSA-PKCS1-v1_5",
    key,
    signed.signature.slice(),
    signed.policy.slice(),
  );
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
