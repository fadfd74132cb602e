/**
 * The TPM backend of the `tpm` key kind: a LUKS2 key sealed by the TPM under
 * a policy that names no PCR value, only the public key that signs PCR
 * policies (TPM2_PolicyAuthorize). To unseal, the caller brings a signed
 * policy for PCR 11 (what the UKI measured, docs/secure-boot.md): the TPM
 * checks the signature, then that PCR 11 holds the signed value. An upgrade
 * to a new UKI signed by the same key brings its own signed policy, so the
 * key is never sealed again (systemd's approach with the UKI's `.pcrsig`;
 * docs/decisions.md, "TPM keys: tpm2-tools, sealed under a signed PCR policy").
 *
 * The real backend runs Debian's tpm2-tools (tpm_tools.ts); the fake
 * simulates PCRs, a TPM that is absent, and one whose seed was cleared.
 * @module
 */

/** The PCR the policy binds: the UKI's sections, measured by its stub (docs/secure-boot.md). */
export const UKI_PCR = 11;

/** A key sealed by one TPM: opaque blobs only that TPM can load, safe to keep in the header. */
export interface SealedKey {
  /** TPM2B_PUBLIC of the sealed object, as tpm2_create wrote it. */
  readonly public: Uint8Array;
  /** TPM2B_PRIVATE of the sealed object (encrypted to the TPM's storage seed). */
  readonly private: Uint8Array;
  /** The PCRs a signed policy must cover to unseal it. */
  readonly pcrs: readonly number[];
  /** SHA-256 of the policy-signing public key (SPKI DER), hex: which key's policies it accepts. */
  readonly keyFingerprint: string;
}

/** A PCR policy signed by the UKI signing key (what a UKI's `.pcrsig` carries). */
export interface SignedPcrPolicy {
  readonly pcrs: readonly number[];
  /** The TPM2_PolicyPCR digest for the expected PCR values ({@link pcrPolicyDigest}). */
  readonly policy: Uint8Array;
  /** RSASSA-PKCS1-v1_5 with SHA-256 over `policy`, by the signing key. */
  readonly signature: Uint8Array;
}

/** The policy-signing key's public half, PEM (SPKI), RSA 2048 or more. */
export type PolicyPublicKeyPem = string;

/** No TPM answered (no device, the TCTI refused, swtpm not running). */
export class TpmUnavailableError extends Error {
  override name = "TpmUnavailableError";
  constructor(readonly tcti: string, options?: ErrorOptions) {
    super(`No TPM answers at "${tcti}"`, options);
  }
}

/**
 * The TPM refused to unseal: PCR 11 does not hold the signed value, the
 * signature is not the enrolled key's, or this TPM did not seal the blob
 * (another board, a cleared TPM). Names the step, never key material.
 */
export class TpmPolicyError extends Error {
  override name = "TpmPolicyError";
  constructor(readonly step: string, detail: string, options?: ErrorOptions) {
    super(`The TPM refused to unseal the key (${step}): ${detail}`, options);
  }
}

/**
 * Seal and unseal LUKS2 keys. Neither is idempotent in the TPM's sense, but
 * both leave no object loaded: every transient object and session is flushed.
 */
export interface TpmBackend {
  /**
   * Seal `key` so that only this TPM, given a policy for `pcrs` signed by
   * `publicKey`, unseals it.
   * @throws TpmUnavailableError
   */
  seal(
    key: Uint8Array,
    publicKey: PolicyPublicKeyPem,
    pcrs: readonly number[],
  ): Promise<SealedKey>;
  /**
   * Unseal with `signed`, checked by the TPM against `publicKey`.
   * @throws TpmUnavailableError; TpmPolicyError when the TPM refuses.
   */
  unseal(
    sealed: SealedKey,
    publicKey: PolicyPublicKeyPem,
    signed: SignedPcrPolicy,
  ): Promise<Uint8Array>;
  /** The SHA-256 bank's value of PCR `index`. @throws TpmUnavailableError */
  readPcr(index: number): Promise<Uint8Array>;
  /**
   * PCR `index` ← SHA-256(PCR ‖ SHA-256(`data`)), SHA-256 bank: a boot phase
   * word, as machined-init and systemd-pcrphase extend them. @throws TpmUnavailableError
   */
  extend(index: number, data: Uint8Array): Promise<void>;
}

const TPM_CC_POLICY_PCR = 0x0000017f;
const TPM_ALG_SHA256 = 0x000b;

/**
 * The TPM2_PolicyPCR digest a trial session computes for `values` (SHA-256
 * bank, PCR index → its 32-byte value), starting from an empty policy: what
 * an image build signs for the PCR 11 its UKI will measure. Pure, no TPM.
 */
export async function pcrPolicyDigest(
  values: ReadonlyMap<number, Uint8Array>,
): Promise<Uint8Array> {
  const pcrs = [...values.keys()].sort((a, b) => a - b);
  if (pcrs.length === 0) throw new RangeError("a PCR policy needs at least one PCR");
  const select = new Uint8Array(3);
  for (const p of pcrs) {
    if (!Number.isInteger(p) || p < 0 || p > 23) throw new RangeError(`no PCR ${p} (0-23)`);
    select[p >> 3] |= 1 << (p & 7);
  }
  const concat = concatBytes(...pcrs.map((p) => {
    const v = values.get(p)!;
    if (v.length !== 32) throw new RangeError(`PCR ${p}'s SHA-256 value is ${v.length} bytes`);
    return v;
  }));
  const pcrDigest = new Uint8Array(await crypto.subtle.digest("SHA-256", concat));
  const selection = concatBytes(u32(1), u16(TPM_ALG_SHA256), Uint8Array.of(3), select);
  const input = concatBytes(new Uint8Array(32), u32(TPM_CC_POLICY_PCR), selection, pcrDigest);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", input));
}

/** Hex SHA-256 of a PEM public key's DER (SPKI): the fingerprint a sealed key records. */
export async function publicKeyFingerprint(pem: PolicyPublicKeyPem): Promise<string> {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

function u16(n: number): Uint8Array {
  const b = new Uint8Array(2);
  new DataView(b.buffer).setUint16(0, n);
  return b;
}

function concatBytes(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
