/**
 * Firmware trust facts: whether UEFI Secure Boot is on, the keys enrolled (PK, KEK, db as
 * EFI_SIGNATURE_LISTs), the kernel's lockdown mode and the TPM's PCRs. Read-only.
 * {@link NativeFirmwareBackend} reads sysfs; {@link FakeFirmwareBackend} holds them in memory.
 *
 * @example
 * ```ts
 * import {
 *   EFI_GLOBAL_VARIABLE_GUID,
 *   NativeFirmwareBackend,
 *   parseSignatureLists,
 * } from "./platform/firmware/mod.ts";
 * const firmware = new NativeFirmwareBackend();
 * const pk = await firmware.efiVariable("PK", EFI_GLOBAL_VARIABLE_GUID, 64 * 1024);
 * if (pk) console.log(parseSignatureLists(pk).map((s) => s.owner));
 * ```
 * @module
 */
export { type FirmwareBackend, FirmwareReadError, PCR_COUNT, type TpmFacts } from "./backend.ts";
export { EFIVAR_ATTRIBUTE_BYTES, FIRMWARE_PATHS, NativeFirmwareBackend } from "./backend_native.ts";
export { FakeFirmwareBackend } from "./backend_fake.ts";
export { firmwareBackendConformance, type FirmwareTarget } from "./backend_conformance.ts";
export {
  EFI_CERT_SHA256_GUID,
  EFI_CERT_X509_GUID,
  EFI_GLOBAL_VARIABLE_GUID,
  EFI_IMAGE_SECURITY_DATABASE_GUID,
  guidAt,
  guidBytes,
} from "./guid.ts";
export {
  buildSignatureList,
  type EfiSignature,
  listProblem,
  MAX_SIGNATURE_DATABASE_BYTES,
  parseSignatureLists,
  SignatureListError,
} from "./signature_list.ts";
