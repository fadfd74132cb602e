/**
 * `machine.install.encryption`: LUKS2 encryption of STATE and EPHEMERAL, one
 * entry per volume. Each volume lists its key slots; the unlock metadata
 * lives in the LUKS2 header (one token per slot), never in a file beside the
 * data. Which key kinds may stand alone is a cross-field rule
 * ({@link encryptionIssues}), so the schema here checks shapes only.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";

/** Key kinds: where a volume's key comes from. */
export const KEY_KINDS = ["static", "nodeid", "tpm"] as const;

/** The LUKS2 keyslots a config may name (LUKS2 has 32: 0..31). */
export const MAX_KEY_SLOT = 31;

/** Longest static passphrase accepted (cryptsetup's own limit is 512 bytes for interactive use). */
export const MAX_PASSPHRASE_BYTES = 512;

const KeySchema = mapping({
  slot: v.pipe(
    v.number("expected a key slot number"),
    v.integer("key slot must be an integer"),
    v.minValue(0, "key slot must be 0 or more"),
    v.maxValue(MAX_KEY_SLOT, `key slot must be at most ${MAX_KEY_SLOT}`),
    v.description("LUKS2 keyslot this key occupies; unique within the volume."),
  ),
  kind: v.pipe(
    v.picklist(KEY_KINDS, `expected one of ${KEY_KINDS.join(", ")}`),
    v.description(
      "`static`: the passphrase below (recovery). `nodeid`: derived from the SMBIOS UUID and " +
        "the volume label (crypto-erase only: anyone holding the disk and the board can open " +
        "it). `tpm`: a random key sealed by the TPM under a signed PCR 11 policy, tried first " +
        "and skipped when the node has no TPM (refused alone: the node could lose it).",
    ),
  ),
  passphrase: v.optional(
    v.pipe(
      v.string("expected a passphrase as a string"),
      v.minLength(8, "passphrase must be at least 8 characters"),
      v.check(
        (s: string) => new TextEncoder().encode(s).length <= MAX_PASSPHRASE_BYTES,
        `passphrase must be at most ${MAX_PASSPHRASE_BYTES} bytes`,
      ),
      v.description(
        "For `static` keys only. Secret: shown as `(redacted)`, never quoted in errors.",
      ),
      v.metadata({ secret: true }),
    ),
  ),
});

/** One volume's encryption. */
export const VolumeEncryptionSchema = mapping({
  keys: v.pipe(
    v.array(KeySchema, "expected a list of keys"),
    v.minLength(1, "at least one key is needed"),
    v.maxLength(MAX_KEY_SLOT + 1, `at most ${MAX_KEY_SLOT + 1} keys`),
    v.description("Key slots, each a way to open the volume."),
  ),
  cipher: v.optional(
    v.pipe(
      v.picklist(["aes-xts-plain64", "xchacha20,aes-adiantum-plain64"], "unsupported cipher"),
      v.description(
        "dm-crypt cipher. Adiantum is for CPUs without AES instructions.",
      ),
    ),
    "aes-xts-plain64",
  ),
  sector_size: v.optional(
    v.pipe(
      v.picklist([512, 4096], "sector_size must be 512 or 4096"),
      v.description("Encryption sector size in bytes."),
    ),
    4096,
  ),
  allow_discards: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description(
        "Pass discards (TRIM) through: faster SSDs, but the free-space pattern is visible.",
      ),
    ),
    false,
  ),
});

/** `machine.install.encryption`. */
export const EncryptionSchema = mapping({
  state: v.optional(
    v.pipe(VolumeEncryptionSchema, v.description("Encrypt STATE (config, CA key, PKI).")),
  ),
  ephemeral: v.optional(
    v.pipe(VolumeEncryptionSchema, v.description("Encrypt EPHEMERAL (the payload's data).")),
  ),
});

/** A parsed volume encryption. */
export type VolumeEncryptionConfig = v.InferOutput<typeof VolumeEncryptionSchema>;
/** A parsed key slot. */
export type EncryptionKeyConfig = VolumeEncryptionConfig["keys"][number];
/** A key kind. */
export type KeyKind = (typeof KEY_KINDS)[number];
