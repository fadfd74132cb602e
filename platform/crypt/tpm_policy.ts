/**
 * Where a node's `tpm` keys get what the TPM needs besides the sealed blob:
 * the public key that signs PCR policies (sealing names it) and the running
 * boot's signed PCR 11 policies (unsealing brings one). On a node these are
 * what systemd-stub hands the initrd from a UKI's `.pcrpkey` and `.pcrsig`
 * sections (`/.extra/tpm2-pcr-public-key.pem`, `/.extra/tpm2-pcr-signature.json`,
 * carried to `/run/machined/stub/` by machined-init;
 * systemd's JSON: `{"sha256": [{"pcrs": [11], "pkfp": hex, "pol": hex, "sig": base64}]}`).
 * {@link TpmKeys} bundles a TPM, its policy source and the node's reason not
 * to use it (no /dev/tpmrm0, no tpm2-tools in the image) for the block domain.
 * @module
 */
import type { ProcessBackend } from "../process/mod.ts";
import type { PolicyPublicKeyPem, SignedPcrPolicy, TpmBackend } from "./tpm.ts";
import { ToolsTpmBackend } from "./tpm_tools.ts";

/** The boot carries no policy-signing key or no signed policy (or an unreadable one). */
export class TpmPolicyMissingError extends Error {
  override name = "TpmPolicyMissingError";
}

/** The policy-signing key and the signed policies of this boot. */
export interface TpmPolicySource {
  /** @throws TpmPolicyMissingError */
  publicKey(): Promise<PolicyPublicKeyPem>;
  /** Every signed PCR policy this boot carries (one per boot phase). @throws TpmPolicyMissingError */
  signedPolicies(): Promise<SignedPcrPolicy[]>;
}

/** A TPM as the block domain uses it for `tpm` key slots. */
export interface TpmKeys {
  tpm: TpmBackend;
  policy: TpmPolicySource;
  /**
   * Why this node cannot use a TPM now (`no TPM device (/dev/tpmrm0)`), or
   * undefined. Asked before every seal and unseal, so a missing device is a
   * reason in the status, never an exception from a tool that is not there.
   */
  unavailable(): Promise<string | undefined>;
}

/** A fixed source (tests, and a build that hands the policy over in memory). */
export class MemoryTpmPolicy implements TpmPolicySource {
  constructor(
    readonly key: PolicyPublicKeyPem | undefined,
    readonly policies: SignedPcrPolicy[] = [],
  ) {}

  publicKey(): Promise<PolicyPublicKeyPem> {
    if (!this.key) return Promise.reject(new TpmPolicyMissingError("no policy-signing key"));
    return Promise.resolve(this.key);
  }

  signedPolicies(): Promise<SignedPcrPolicy[]> {
    if (this.policies.length === 0) {
      return Promise.reject(new TpmPolicyMissingError("no signed PCR policy for this boot"));
    }
    return Promise.resolve(this.policies);
  }
}

/**
 * Where machined reads a UKI's `.pcrpkey` and `.pcrsig`: systemd-stub puts them
 * in the initramfs as `/.extra/tpm2-pcr-*`, and machined-init carries them
 * across the switch into the root image, read-only (native-ops/init/src/stub_extra.rs).
 */
export const STUB_PCR_PUBLIC_KEY = "/run/machined/stub/tpm2-pcr-public-key.pem";
export const STUB_PCR_SIGNATURE = "/run/machined/stub/tpm2-pcr-signature.json";

/** Largest `.pcrsig` read (a few policies of a few hundred bytes each). */
const MAX_SIGNATURE_BYTES = 64 * 1024;

/** Reads the key and the signed policies from files (systemd-stub's by default). */
export class FileTpmPolicy implements TpmPolicySource {
  constructor(
    readonly publicKeyPath = STUB_PCR_PUBLIC_KEY,
    readonly signaturePath = STUB_PCR_SIGNATURE,
  ) {}

  async publicKey(): Promise<PolicyPublicKeyPem> {
    const text = await Deno.readTextFile(this.publicKeyPath).catch((e) => {
      throw new TpmPolicyMissingError(`no policy-signing key at "${this.publicKeyPath}"`, {
        cause: e,
      });
    });
    if (!text.includes("-----BEGIN PUBLIC KEY-----")) {
      throw new TpmPolicyMissingError(`"${this.publicKeyPath}" holds no PEM public key`);
    }
    return text;
  }

  async signedPolicies(): Promise<SignedPcrPolicy[]> {
    const bytes = await Deno.readFile(this.signaturePath).catch((e) => {
      throw new TpmPolicyMissingError(`no signed PCR policy at "${this.signaturePath}"`, {
        cause: e,
      });
    });
    if (bytes.length > MAX_SIGNATURE_BYTES) {
      throw new TpmPolicyMissingError(
        `"${this.signaturePath}" is over ${MAX_SIGNATURE_BYTES} bytes`,
      );
    }
    return parsePcrSignature(new TextDecoder().decode(bytes), this.signaturePath);
  }
}

/**
 * The SHA-256 bank's entries of systemd's `.pcrsig` JSON. Pure.
 * @throws TpmPolicyMissingError when it is not that JSON or holds no entry
 */
export function parsePcrSignature(text: string, where = "the PCR signature"): SignedPcrPolicy[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new TpmPolicyMissingError(`${where} is not JSON`, { cause: e });
  }
  const bank = (doc as { sha256?: unknown } | null)?.sha256;
  if (!Array.isArray(bank) || bank.length === 0) {
    throw new TpmPolicyMissingError(`${where} has no sha256 entries`);
  }
  return bank.map((e, i) => {
    const { pcrs, pol, sig } = (e ?? {}) as Record<string, unknown>;
    const ok = Array.isArray(pcrs) && pcrs.every((p) => Number.isInteger(p)) &&
      typeof pol === "string" && /^([0-9a-f]{2})+$/i.test(pol) && typeof sig === "string";
    if (!ok) throw new TpmPolicyMissingError(`${where}: sha256[${i}] is not a signed policy`);
    try {
      return {
        pcrs: pcrs as number[],
        policy: Uint8Array.from(pol.match(/../g)!, (h) => parseInt(h, 16)),
        signature: Uint8Array.from(atob(sig), (c) => c.charCodeAt(0)),
      };
    } catch (cause) {
      throw new TpmPolicyMissingError(`${where}: sha256[${i}]'s signature is not base64`, {
        cause,
      });
    }
  });
}

/** systemd's `.pcrsig` JSON for `policies` (what an image build writes). Pure. */
export function formatPcrSignature(
  policies: readonly SignedPcrPolicy[],
  keyFingerprint: string,
): string {
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return JSON.stringify({
    sha256: policies.map((p) => ({
      pcrs: [...p.pcrs],
      pkfp: keyFingerprint,
      pol: hex(p.policy),
      sig: btoa(String.fromCharCode(...p.signature)),
    })),
  });
}

const have = (p: string) => Deno.stat(p).then(() => true, () => false);

/**
 * Why a node cannot use its TPM through tpm2-tools, or undefined: the
 * kernel's resource manager device and the tools must both be there.
 */
export async function toolsTpmUnavailable(
  device = "/dev/tpmrm0",
  tool = "/usr/bin/tpm2",
): Promise<string | undefined> {
  if (!await have(device)) return `no TPM device (${device})`;
  if (!await have(tool)) return `the image carries no tpm2-tools (${tool})`;
  return undefined;
}

/**
 * The node's TPM: tpm2-tools over the kernel's resource manager
 * (`/dev/tpmrm0`), the policy from systemd-stub's files, unavailable while
 * the device or the tools are missing.
 */
export function nodeTpmKeys(process: ProcessBackend, device = "/dev/tpmrm0"): TpmKeys {
  return {
    tpm: new ToolsTpmBackend({ process, tcti: `device:${device}` }),
    policy: new FileTpmPolicy(),
    unavailable: () => toolsTpmUnavailable(device),
  };
}
