/**
 * `machine.install`: where the node installs itself.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { absolutePath } from "./primitives.ts";
import { EncryptionSchema } from "./encryption.ts";

/** `machine.install`; absent means the node runs from what it booted and installs nothing. */
export const InstallSchema = mapping({
  disk: v.pipe(
    absolutePath("disk path"),
    v.check(
      (s: string) => s.startsWith("/dev/"),
      "disk must be a device path under /dev/",
    ),
    v.description("Block device to install to."),
    v.examples(["/dev/vda", "/dev/disk/by-id/nvme-eui.0025388b71b6e1a4"]),
  ),
  wipe: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description("Zero the partition table before installing, even if the disk holds data."),
    ),
    false,
  ),
  system: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description(
        "Install the system on the disk and boot from it: when the disk is not the one the node " +
          "booted from, write a GPT and an ESP copied from the boot medium (systemd-boot, both " +
          "slots), check every copied file's sha256, let STATE and EPHEMERAL be added, then " +
          "reboot. The boot medium is never written; a disk holding data needs wipe. Without " +
          "it the disk only gets STATE and EPHEMERAL.",
      ),
    ),
    false,
  ),
  encryption: v.optional(
    v.pipe(
      EncryptionSchema,
      v.description(
        "LUKS2 encryption of STATE and EPHEMERAL (see docs/encryption.md). Set it before the " +
          "volumes are first made: a plain volume is never converted in place.",
      ),
    ),
  ),
});

/** A parsed `machine.install`. */
export type InstallConfig = v.InferOutput<typeof InstallSchema>;
