/**
 * What a Secure Boot image's ESP holds beyond a plain one's (issue 28): the
 * boot loader signed with the owner's db key, each slot's Unified Kernel
 * Image (kernel, initramfs and the slot's command line, root hash included)
 * signed with it, and the owner's PK, KEK and db as the .auth files
 * systemd-boot enrolls on the first boot, while the firmware is in Setup
 * Mode. One signature then covers everything from the loader to the root:
 * the UKI's command line names the root image's dm-verity root hash.
 * @module
 */
import { join } from "node:path";
import { buildUki, type UkiParts, ukiSections } from "../uki/uki.ts";
import { certPublicKeyPem, type PcrSigningKey, ukiPcrSignature } from "./pcr_signature.ts";
import { signEfi, writeEnrollmentFiles } from "./sign_efi.ts";
import { loadSecureBootKeys } from "../../pki/mod.ts";
import { SYSTEMD_STUB_EFI } from "../versions.ts";

/** The owner's keys and what the UKIs are made of. */
export interface SecureBootSpec {
  /** A directory written by `machinectl gen secureboot-keys` (PK, KEK, db .crt/.key). */
  keyDir: string;
  /** systemd's EFI stub for this architecture (linuxx64.efi.stub). */
  stub: string;
  /** The os-release record the UKIs carry. */
  osRelease: string;
  /** The PK certificate (the enrollment files' owner GUID derives from it). */
  pkCertPem: string;
  /** The db key, which also signs each UKI's PCR 11 policy (`.pcrsig`, `.pcrpkey`). */
  pcrKey: PcrSigningKey;
}

/** Sign the boot loader into `workDir`; returns the signed file. */
export async function signedLoader(sb: SecureBootSpec, loader: string, workDir: string) {
  const out = join(workDir, "loader.signed.efi");
  await signEfi(sb.keyDir, loader, out);
  return out;
}

/** Build and sign one slot's UKI into `workDir`; returns the signed file. */
export async function signedUki(
  sb: SecureBootSpec,
  o: { kernel: string; initramfs: string; cmdline: string; name: string; workDir: string },
): Promise<string> {
  const uki = await policySignedUki({
    stub: await Deno.readFile(sb.stub),
    kernel: await Deno.readFile(o.kernel),
    initramfs: await Deno.readFile(o.initramfs),
    cmdline: o.cmdline,
    osRelease: sb.osRelease,
  }, sb.pcrKey);
  const unsigned = join(o.workDir, `${o.name}.unsigned.efi`);
  const signed = join(o.workDir, `${o.name}.efi`);
  await Deno.writeFile(unsigned, uki);
  await signEfi(sb.keyDir, unsigned, signed);
  await Deno.remove(unsigned);
  return signed;
}

/**
 * The UKI of `parts` with `.pcrpkey` (the key's public half) and `.pcrsig`
 * (the PCR 11 policy it reaches, signed by the key): what a node's `tpm` key
 * slots unseal with, and what an upgrade brings anew without a reseal.
 */
export async function policySignedUki(
  parts: Omit<UkiParts, "pcrPublicKey" | "pcrSignature">,
  key: PcrSigningKey,
): Promise<Uint8Array> {
  const withKey = { ...parts, pcrPublicKey: key.publicPem };
  const measured = new Map(ukiSections(withKey).map((s) => [s.name, s.data]));
  return buildUki({ ...withKey, pcrSignature: await ukiPcrSignature(key, measured) });
}

/** The PK, KEK and db .auth files, written into `workDir/keys`. */
export function enrollmentFiles(
  sb: SecureBootSpec,
  workDir: string,
  epoch: number,
): Promise<string[]> {
  return writeEnrollmentFiles(sb.keyDir, join(workDir, "enroll"), {
    pkCertPem: sb.pkCertPem,
    epoch,
  });
}

/**
 * The Secure Boot settings of a build from `--secure-boot-keys DIR`: the keys
 * checked (each key fits its certificate), the stub, the os-release record.
 * @throws TypeError for an architecture or board without a UKI stub here
 *   (x86_64 UEFI only, for now); PkiError for unusable keys.
 */
export async function resolveSecureBoot(
  keyDir: string,
  o: { arch: string; board?: string; release: Record<string, string> },
): Promise<SecureBootSpec> {
  if (o.arch !== "amd64" || o.board) {
    throw new TypeError(
      `--secure-boot-keys: only x86_64 UEFI images are signed so far (not ${o.board ?? o.arch})`,
    );
  }
  const keys = await loadSecureBootKeys((f) => Deno.readTextFile(join(keyDir, f)));
  const osRelease = [
    "ID=machined",
    "NAME=machined",
    `VERSION_ID=${o.release["image-version"] ?? ""}`,
    "",
  ].join("\n");
  return {
    keyDir,
    stub: SYSTEMD_STUB_EFI,
    osRelease,
    pkCertPem: keys.PK.certPem,
    pcrKey: { privatePem: keys.db.keyPem, publicPem: certPublicKeyPem(keys.db.certPem) },
  };
}
