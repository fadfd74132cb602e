/**
 * A UKI's signed PCR 11 policy (`.pcrsig`, with the public key in `.pcrpkey`):
 * what systemd-stub hands the initrd as `/.extra/tpm2-pcr-signature.json` and
 * `/.extra/tpm2-pcr-public-key.pem`, and what a node's `tpm` key slots unseal
 * with (platform/crypt/tpm.ts). The PCR 11 the UKI reaches is computed here,
 * as systemd-stub 252 measures it and machined-init extends its phases after
 * it; the TPM2_PolicyPCR digest for that value is signed with the UKI signing
 * key (the owner's db key) by platform/crypt's signPcrPolicy, as tests sign theirs. No TPM is needed: systemd-measure 252's `sign`
 * needs one for its trial session (docs/decisions.md, "Signed PCR 11 policies
 * in TypeScript"), and the result is the same bytes (pcr_signature_test.ts).
 * @module
 */
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate, SubjectPublicKeyInfo } from "@peculiar/asn1-x509";
import { formatPcrSignature, signPcrPolicy, UKI_PCR } from "../../platform/crypt/mod.ts";

/** The sections systemd-stub 252 measures into PCR 11, in its order (`.pcrsig` is not one). */
export const MEASURED_SECTIONS = [
  ".linux",
  ".osrel",
  ".cmdline",
  ".initrd",
  ".splash",
  ".dtb",
  ".pcrpkey",
] as const;

/**
 * The boot phases machined-init extends into PCR 11 before machined starts
 * (native-ops/init/src/tpm.rs): the phase in which `tpm` keys unseal, and the
 * only one a UKI's policy is signed for (machined extends `sysinit` after).
 */
export const UNSEAL_PHASES: readonly string[] = ["enter-initrd", "leave-initrd"];

const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

/**
 * PCR 11's SHA-256 value after systemd-stub measured `sections` (each measured
 * one: its name with a NUL, then its bytes) and `phases` were extended (each
 * word's SHA-256, no terminator), from all zeroes. Pure.
 */
export async function ukiPcr11(
  sections: ReadonlyMap<string, Uint8Array>,
  phases: readonly string[],
): Promise<Uint8Array> {
  const sha = async (b: Uint8Array) =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", b.slice()));
  const text = (s: string) => new TextEncoder().encode(s);
  let pcr = new Uint8Array(32);
  const extend = async (digest: Uint8Array) => {
    const both = new Uint8Array(64);
    both.set(pcr);
    both.set(digest, 32);
    pcr = await sha(both);
  };
  for (const name of MEASURED_SECTIONS) {
    const data = sections.get(name);
    if (!data) continue;
    await extend(await sha(text(`${name}\0`)));
    await extend(await sha(data));
  }
  for (const word of phases) await extend(await sha(text(word)));
  return pcr;
}

/**
 * systemd's `pkfp`: the SHA-256 of the key as PKCS#1 RSAPublicKey DER (the
 * SPKI's bit string), hex. systemd-cryptsetup picks `.pcrsig` entries by it.
 */
export async function systemdKeyFingerprint(publicPem: string): Promise<string> {
  const spki = AsnConvert.parse(pemBody(publicPem, "PUBLIC KEY"), SubjectPublicKeyInfo);
  const d = await crypto.subtle.digest("SHA-256", spki.subjectPublicKey);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The policy-signing key: the db key's private half (PKCS#8 PEM) and public half (SPKI PEM). */
export interface PcrSigningKey {
  privatePem: string;
  publicPem: string;
}

/**
 * The `.pcrsig` JSON for a UKI made of `sections` (its `.pcrpkey` among them,
 * since the stub measures it): the PolicyPCR digest of the PCR 11 each entry
 * of `phases` reaches, signed RSASSA-PKCS1-v1_5 SHA-256 by `key`.
 */
export async function ukiPcrSignature(
  key: PcrSigningKey,
  sections: ReadonlyMap<string, Uint8Array>,
  phases: readonly (readonly string[])[] = [UNSEAL_PHASES],
): Promise<string> {
  const priv = await crypto.subtle.importKey(
    "pkcs8",
    pemBody(key.privatePem, "PRIVATE KEY"),
    RSA,
    false,
    ["sign"],
  );
  const policies = [];
  for (const p of phases) {
    policies.push(await signPcrPolicy(priv, new Map([[UKI_PCR, await ukiPcr11(sections, p)]])));
  }
  return formatPcrSignature(policies, await systemdKeyFingerprint(key.publicPem));
}

/** The SPKI PEM of a certificate's public key (the db certificate's, for `.pcrpkey`). Pure. */
export function certPublicKeyPem(certPem: string): string {
  const cert = AsnConvert.parse(pemBody(certPem, "CERTIFICATE"), Certificate);
  const der = new Uint8Array(AsnConvert.serialize(cert.tbsCertificate.subjectPublicKeyInfo));
  const b64 = btoa(String.fromCharCode(...der)).replace(/(.{64})/g, "$1\n").trimEnd();
  return `-----BEGIN PUBLIC KEY-----\n${b64}\n-----END PUBLIC KEY-----\n`;
}

/** The DER inside the first `-----BEGIN <label>-----` block of `pem`. */
function pemBody(pem: string, label: string): Uint8Array<ArrayBuffer> {
  const m = new RegExp(`-----BEGIN ${label}-----([^-]+)-----END ${label}-----`).exec(pem);
  if (!m) throw new TypeError(`no "${label}" PEM block`);
  return Uint8Array.from(atob(m[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0));
}
