/**
 * The command line an install writes for the target slot, from a verified
 * manifest: the bundle's words (checked: bundle/bundle_cmdline.ts, which
 * refuses the node's own words and anything but printable ASCII), then the
 * node's slot and root words, the verity word re-written from its parsed
 * value, with the operator's `machine.kernel.args` applied to the bundle's
 * words first (config/kernel_args.ts: they never touch a node word). Shared by the ESP's loader entry (slot_plan.ts) and the Pi's
 * cmdline.txt (pi_slot_plan.ts), so both layouts apply the same rule.
 * @module
 */
import { slotCmdline, type SlotRoot } from "../layout/mod.ts";
import { BundleError, checkBundleCmdline, type Manifest, SlotError } from "../bundle/mod.ts";
import {
  applyRecordedKernelArgs,
  checkCmdlineSize,
  type KernelArgs,
  KernelArgsError,
} from "../config/mod.ts";
import type { Slot } from "./entries.ts";

/** dm-verity's data and hash block size (imager/verity_tree.ts). */
const VERITY_BLOCK = 4096;

/**
 * The target slot's kernel command line for `manifest`. Pure.
 * @throws BundleError bad-cmdline when the bundle's command line carries a
 *   node word or a control character, or its verity tree cannot fit its root
 *   image.
 * @throws SlotError kernel-args when the line with `args` is longer than the
 *   kernel keeps (or an arg is refused: config validation refuses it first).
 */
export function installCmdline(manifest: Manifest, target: Slot, args?: KernelArgs): string {
  const { words, verity } = checkBundleCmdline(manifest.cmdline);
  const root = manifest.files.find((f) => f.name === "root.img")!;
  if (verity && verity.dataBlocks * VERITY_BLOCK >= root.size) {
    throw new BundleError(
      "bad-cmdline",
      `machined.root.verity= names ${verity.dataBlocks} data blocks of ${VERITY_BLOCK} bytes, ` +
        `but root.img is ${root.size} bytes: no room for its hash tree`,
    );
  }
  const slotRoot: SlotRoot = verity
    ? { sha256: root.sha256, fstype: "squashfs", verity }
    : { sha256: root.sha256, fstype: "squashfs" };
  try {
    return checkCmdlineSize(slotCmdline(
      applyRecordedKernelArgs(words, args ?? { add: [], remove: [] }),
      target,
      slotRoot,
    ));
  } catch (e) {
    if (e instanceof KernelArgsError) throw new SlotError("kernel-args", e.message);
    throw e;
  }
}
