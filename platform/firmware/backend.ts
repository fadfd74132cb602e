/**
 * The firmware backend: what the firmware, the kernel's lockdown and the TPM say about how this
 * boot was verified. Read-only: machined never writes an EFI variable or extends a PCR through
 * it. Absence is an answer (a BIOS or a Pi boot has no EFI; a VM may have no TPM), not an error.
 * @module
 */

/** PCRs reported: 0–15, the ones firmware, loader and kernel measure into. */
export const PCR_COUNT = 16;

/** The TPM as sysfs shows it. */
export interface TpmFacts {
  /** A TPM character device is registered (`/sys/class/tpm/tpm0`). */
  readonly present: boolean;
  /**
   * The SHA-256 bank's PCRs 0–15 as lower-case hex, index = PCR; `undefined` where the kernel
   * offers no value (no `pcr-sha256/` directory before Linux 5.12, or a TPM 1.2).
   */
  readonly pcrSha256: readonly (string | undefined)[];
}

/** The raw facts a SecureBootStatus is made of. */
export interface FirmwareBackend {
  /** The node booted through UEFI (`/sys/firmware/efi` exists). */
  efi(): Promise<boolean>;
  /**
   * An EFI variable's data, without efivarfs's 4-byte attribute prefix; `undefined` when the
   * variable does not exist.
   * @throws FirmwareReadError when it is larger than `maxBytes` (refused before reading it all),
   *   or cannot be read.
   */
  efiVariable(name: string, guid: string, maxBytes: number): Promise<Uint8Array | undefined>;
  /** The kernel's lockdown file (`none [integrity] confidentiality`); `undefined` when absent. */
  lockdown(): Promise<string | undefined>;
  /** The first TPM and its PCRs. */
  tpm(): Promise<TpmFacts>;
}

/** A firmware fact exists but could not be read (too large, permission, I/O). */
export class FirmwareReadError extends Error {
  override name = "FirmwareReadError";
  constructor(readonly path: string, message: string, options?: ErrorOptions) {
    super(`Cannot read ${JSON.stringify(path)}: ${message}`, options);
  }
}
