/**
 * LUKS2 volumes: headers, keyslots, tokens and dm-crypt mappings.
 * {@link NativeCryptBackend} runs Debian's `cryptsetup` with keys in private
 * files, never argv; {@link FakeCryptBackend} simulates headers in memory.
 * {@link nodeIdKey} derives the `nodeid` key kind.
 *
 * @example
 * ```ts
 * import { FakeCryptBackend } from "./platform/crypt/mod.ts";
 * const crypt = new FakeCryptBackend();
 * await crypt.format("/dev/vda5", new TextEncoder().encode("passphrase"), { slot: 0 });
 * const mapped = await crypt.open("/dev/vda5", "STATE", new TextEncoder().encode("passphrase"));
 * ```
 * @module
 */
export {
  type CryptBackend,
  DEFAULT_PBKDF,
  type FormatOptions,
  KeyRejectedError,
  type LuksInfo,
  type LuksSlot,
  type LuksToken,
  MACHINE_KEY_PBKDF,
  NotLuksError,
  type Pbkdf,
  TOKEN_PREFIX,
} from "./backend.ts";
export { CryptsetupError, NativeCryptBackend, type NativeCryptOptions } from "./backend_native.ts";
export { FakeCryptBackend } from "./backend_fake.ts";
export {
  cryptBackendConformance,
  type CryptConformanceOptions,
  type CryptFixture,
  TEST_PBKDF,
} from "./backend_conformance.ts";
export { parseLuksDump } from "./luks_dump.ts";
export { nodeIdKey, readSmbiosUuid, SMBIOS_UUID_PATH } from "./node_id_key.ts";
export {
  pcrPolicyDigest,
  type PolicyPublicKeyPem,
  publicKeyFingerprint,
  type SealedKey,
  type SignedPcrPolicy,
  type TpmBackend,
  TpmPolicyError,
  TpmUnavailableError,
  UKI_PCR,
} from "./tpm.ts";
export { checkSigned, ToolsTpmBackend, type ToolsTpmOptions, Tpm2ToolsError } from "./tpm_tools.ts";
export { FakeTpmBackend } from "./tpm_fake.ts";
export {
  FileTpmPolicy,
  formatPcrSignature,
  MemoryTpmPolicy,
  nodeTpmKeys,
  parsePcrSignature,
  STUB_PCR_PUBLIC_KEY,
  STUB_PCR_SIGNATURE,
  toolsTpmUnavailable,
  type TpmKeys,
  TpmPolicyMissingError,
  type TpmPolicySource,
} from "./tpm_policy.ts";
export { generatePolicyKey, type PolicyKey, signPcrPolicy } from "./tpm_policy_key.ts";
export {
  enrollTpmSlot,
  sealedFromToken,
  TPM_TOKEN,
  tpmToken,
  TpmTokenError,
  unsealTpmSlot,
} from "./tpm_slot.ts";
export { tpmConformance, type TpmConformanceOptions, type TpmFixture } from "./tpm_conformance.ts";
