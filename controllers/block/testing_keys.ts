/**
 * Test support: the key slots and encryption config the volume tests share
 * (luks_volume on fakes and as root, the rotation pass as root, the tpm slot
 * tests as root), so a change of the config's shape is made once.
 * @module
 */
import type { VolumeEncryptionConfig } from "../../config/mod.ts";

/** The SMBIOS UUID the `nodeid` key derives from. */
export const UUID = "4c4c4544-0042-3510-8052-b4c04f384d32";
/** A static key in slot 0: what a first boot formats with. */
export const S0 = { slot: 0, kind: "static" as const, passphrase: "old-passphrase" };
/** A nodeid key in slot 1. */
export const N1 = { slot: 1, kind: "nodeid" as const };
/** The static key a rotation brings, in slot 2. */
export const S2 = { slot: 2, kind: "static" as const, passphrase: "new-passphrase" };
/** A TPM-sealed key in slot 1. */
export const T1 = { slot: 1, kind: "tpm" as const };

/** A volume's encryption with `keys` and the defaults the node formats with. */
export const enc = (...keys: VolumeEncryptionConfig["keys"]): VolumeEncryptionConfig => ({
  keys,
  cipher: "aes-xts-plain64",
  sector_size: 4096,
  allow_discards: false,
});
