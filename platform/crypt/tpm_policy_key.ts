/**
 * Signing PCR policies for the `tpm` key kind, as an image build does for the
 * PCR 11 its UKI will measure (the role of a UKI's `.pcrsig`): RSASSA-PKCS1-v1_5
 * with SHA-256 over the TPM2_PolicyPCR digest, by the key whose public half
 * the sealed key names. Tests use {@link generatePolicyKey} for a throwaway key.
 * @module
 */
import { pcrPolicyDigest, type PolicyPublicKeyPem, type SignedPcrPolicy } from "./tpm.ts";

const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/** A policy-signing key pair: the private key and the public half as PEM (SPKI). */
export interface PolicyKey {
  readonly privateKey: CryptoKey;
  readonly publicPem: PolicyPublicKeyPem;
}

/** A new RSA 2048 policy-signing key (tests; a node's is the UKI signing key). */
export async function generatePolicyKey(): Promise<PolicyKey> {
  const pair = await crypto.subtle.generateKey(
    { ...RSA, modulusLength: 2048, publicExponent: Uint8Array.of(1, 0, 1) },
    true,
    ["sign", "verify"],
  );
  const der = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
  const b64 = btoa(String.fromCharCode(...der)).replace(/(.{64})/g, "$1\n").trimEnd();
  return {
    privateKey: pair.privateKey,
    publicPem: `-----BEGIN PUBLIC KEY-----\n${b64}\n-----END PUBLIC KEY-----\n`,
  };
}

/** Sign the policy for `values` (PCR index → its expected SHA-256 value). */
export async function signPcrPolicy(
  privateKey: CryptoKey,
  values: ReadonlyMap<number, Uint8Array>,
): Promise<SignedPcrPolicy> {
  const policy = await pcrPolicyDigest(values);
  const signature = new Uint8Array(await crypto.subtle.sign(RSA, privateKey, policy.slice()));
  return { pcrs: [...values.keys()].sort((a, b) => a - b), policy, signature };
}
