/**
 * Which key derivation a LUKS2 slot gets, by its key's kind: a passphrase a
 * person chose keeps argon2id (memory-hard, the only defence of a guessable
 * key); a key the machine made (`nodeid`, a TPM-sealed random key) gets
 * PBKDF2 at cryptsetup's least, since a slow KDF adds nothing to a key with a
 * random key's entropy and took seconds per derivation in a 1 GiB TCG guest
 * (docs/decisions.md, "Machine-made keys derive with PBKDF2").
 * @module
 */
import type { EncryptionKeyConfig } from "../../config/mod.ts";
import { DEFAULT_PBKDF, MACHINE_KEY_PBKDF, type Pbkdf } from "../../platform/crypt/mod.ts";

/** The derivation of a slot holding a `kind` key; `passphrase` overrides a passphrase's (tests). Pure. */
export function slotPbkdf(kind: EncryptionKeyConfig["kind"], passphrase?: Pbkdf): Pbkdf {
  switch (kind) {
    case "static":
      return passphrase ?? DEFAULT_PBKDF;
    case "nodeid":
    case "tpm":
      return MACHINE_KEY_PBKDF;
  }
}
