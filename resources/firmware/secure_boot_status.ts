/**
 * SecureBootStatus: how this boot was verified, as the firmware, the kernel and the TPM report
 * it: UEFI Secure Boot and Setup Mode, the keys enrolled in PK, KEK and db, the kernel's lockdown
 * mode, and the TPM's PCRs 0–15. Read-only and holding no secret (certificates are public), so
 * any role may read it. Written only by firmware.SecureBootStatusController; docs/api.md.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const SECURE_BOOT_STATUS = "SecureBootStatus";
/** The single SecureBootStatus's id. */
export const SECURE_BOOT_STATUS_ID = "secureboot";

/** A firmware switch: `unknown` when there is no EFI or the variable could not be read. */
export type FirmwareSwitch = "on" | "off" | "unknown";

/**
 * The kernel's lockdown mode: `integrity` refuses unsigned modules and kexec, `confidentiality`
 * also hides kernel memory; `unknown` when the kernel offers no lockdown file.
 */
export type LockdownMode = "none" | "integrity" | "confidentiality" | "unknown";

/** One X.509 certificate enrolled in a key database. */
export interface SecureBootCertificate {
  /** The certificate's subject, RFC 4514 style (`CN=… Secure Boot db, O=…`). */
  readonly subject: string;
  /** `SHA256:` and the hex SHA-256 of its DER, as pki's fingerprints are printed. */
  readonly sha256: string;
  /** The SignatureOwner GUID it was enrolled with. */
  readonly owner: string;
}

/** What one key database variable (PK, KEK or db) holds. */
export interface KeyDatabaseStatus {
  /** The variable exists (an empty PK means Setup Mode). */
  readonly present: boolean;
  /** Its X.509 certificates, in enrolled order. */
  readonly certificates: readonly SecureBootCertificate[];
  /** SHA-256 image hashes enrolled (db may allow single binaries by hash). */
  readonly hashes: number;
  /** Entries of any other type, and certificates that did not parse. */
  readonly other: number;
  /** Why the variable could not be read or parsed (too large, inconsistent sizes); "" when it was. */
  readonly reason: string;
}

/** One PCR of the TPM's SHA-256 bank. */
export interface PcrValue {
  readonly index: number;
  /** Lower-case hex, 64 digits. */
  readonly sha256: string;
}

export interface SecureBootStatusSpec {
  /** The node booted through UEFI (`/sys/firmware/efi` exists). */
  readonly efi: boolean;
  /** The firmware verified what it booted (efivar `SecureBoot` = 1). */
  readonly secureBoot: FirmwareSwitch;
  /** No PK is enrolled, so the keys are open to change (efivar `SetupMode` = 1). */
  readonly setupMode: FirmwareSwitch;
  /** Why `secureBoot` or `setupMode` is `unknown` (no EFI: a BIOS or a Pi boot); "" otherwise. */
  readonly reason: string;
  readonly lockdown: LockdownMode;
  /** The Platform Key. */
  readonly pk: KeyDatabaseStatus;
  /** The Key Exchange Keys. */
  readonly kek: KeyDatabaseStatus;
  /** The signature database: what the firmware lets boot. */
  readonly db: KeyDatabaseStatus;
  /** A TPM is registered (`/sys/class/tpm/tpm0`). */
  readonly tpm: boolean;
  /** PCRs 0–15 the kernel offers (`pcr-sha256/`), by index; empty without a TPM 2.0 or on older kernels. */
  readonly pcrs: readonly PcrValue[];
}

function databaseCell(d: KeyDatabaseStatus): string {
  if (d.reason) return "unreadable";
  if (!d.present) return "absent";
  const parts = [`${d.certificates.length} cert${d.certificates.length === 1 ? "" : "s"}`];
  if (d.hashes) parts.push(`${d.hashes} hash${d.hashes === 1 ? "" : "es"}`);
  if (d.other) parts.push(`${d.other} other`);
  return parts.join(", ");
}

export const secureBootStatusDescriptor: ResourceDescriptor<
  typeof SECURE_BOOT_STATUS,
  SecureBootStatusSpec
> = {
  type: SECURE_BOOT_STATUS,
  namespace: "runtime",
  aliases: ["securebootstatus", "securebootstatuses", "secureboot", "sbs"],
  description: "Secure Boot, Setup Mode, enrolled keys, kernel lockdown and TPM PCRs",
  columns: [
    { header: "SECUREBOOT", value: (s) => s.secureBoot },
    { header: "SETUPMODE", value: (s) => s.setupMode },
    { header: "LOCKDOWN", value: (s) => s.lockdown },
    { header: "DB", value: (s) => databaseCell(s.db) },
    { header: "TPM", value: (s) => s.tpm ? `yes (${s.pcrs.length} PCRs)` : "no" },
    { header: "REASON", value: (s) => s.reason },
  ],
};
