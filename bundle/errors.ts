/**
 * Why a bundle or an upgrade step was refused: one typed error with a closed
 * `reason`, so the API maps each to a gRPC code and a test can name it.
 */

/** Every reason a bundle is refused. */
export type BundleRefusal =
  | "bad-magic"
  | "bad-manifest"
  | "bad-cmdline"
  | "wrong-algorithm"
  | "unknown-key"
  | "bad-signature"
  | "wrong-compatible"
  | "file-mismatch"
  | "truncated"
  | "trailing-bytes"
  /** No byte arrived within the idle deadline, or the whole upgrade ran past its deadline. */
  | "stalled"
  /** A UKI the enrolled Secure Boot db does not accept (unsigned, another owner's, changed). */
  | "untrusted-uki"
  /** A UKI that is no PE image, or whose signed command line names another slot or root. */
  | "bad-uki";

/** A refused bundle: nothing it carries is armed. */
export class BundleError extends Error {
  override name = "BundleError";
  constructor(readonly reason: BundleRefusal, message: string) {
    super(`bundle refused (${reason}): ${message}`);
  }
}

/** Every reason a slot operation is refused. */
export type SlotRefusal =
  | "booted-slot"
  | "no-booted-slot"
  | "nothing-to-roll-back"
  | "slot-bad"
  | "esp-busy"
  | "verify-failed"
  /** The bundle's version is below the downgrade floor in force. */
  | "downgrade"
  /** The bundle's version ranks as the floor in force (it would overwrite the fallback slot). */
  | "replay"
  /** The bundle's version has no order (a commit hash) while a floor is in force. */
  | "unordered"
  /** The ESP ran out of space (ENOSPC) or quota (EDQUOT) while receiving. */
  | "no-space"
  /** The tries to arm a slot with are outside `machine.upgrade.boot_tries`' bounds. */
  | "bad-tries"
  /**
   * The booted slot starts from a signed UKI (Secure Boot); a bundle carries
   * a kernel and initramfs, not a UKI signed with the owner's db key, so the
   * firmware would refuse the slot it wrote.
   */
  | "signed-boot"
  /** machine.kernel.args cannot be applied to this bundle's line (too long for the kernel). */
  | "kernel-args"
  /** The booted slot has no loader entry, or more than one, to write kernel args into. */
  | "no-entry"
  /** The booted slot's loader entry is not one machined wrote (not exactly one `options` line). */
  | "bad-entry"
  /**
   * The bundle's slot lacks a system extension the running node has
   * (upgrade/extension_drop.ts); `--force` installs it anyway.
   */
  | "extension-dropped";

/** A slot write, bless or rollback that was refused or failed. */
export class SlotError extends Error {
  override name = "SlotError";
  constructor(readonly reason: SlotRefusal, message: string) {
    super(`${message} (${reason})`);
  }
}
