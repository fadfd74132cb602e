/**
 * Where the next boot's kernel command line lives, behind one interface: on a node the booted
 * slot's loader entry on the ESP (upgrade/booted_cmdline.ts writes only its `options` line,
 * through a pure plan), in tests {@link FakeBootCmdlineBackend}. The kernel-cmdline controller
 * reads it, writes `machine.kernel.args` into it, and says what is pending.
 * @module
 */
import type { KernelArgs } from "../../config/mod.ts";

/**
 * The booted slot's next boot: `entry`, a plain entry whose `options` line machined writes;
 * `uki`, a signed UKI whose line is inside its signature (only a signed upgrade changes it);
 * `none`, nothing to write into (not booted from a slot, or a board whose line is not kept in
 * a loader entry), with the reason.
 */
export type NextBoot =
  | {
    readonly kind: "entry";
    readonly slot: string;
    readonly file: string;
    readonly cmdline: string;
  }
  | { readonly kind: "uki"; readonly slot: string; readonly file: string }
  | { readonly kind: "none"; readonly reason: string };

/** The next boot's command line: read it, and write the operator's arguments into it. */
export interface BootCmdlineBackend {
  /** What the booted slot boots next. @throws when the medium cannot be read */
  next(): Promise<NextBoot>;
  /**
   * Apply `args` to the booted slot's entry line (config/kernel_args.ts's applyRecordedKernelArgs: the
   * previous config's changes undone first);
   * nothing is written when the line already has them, or the slot is `uki`/`none`.
   * @returns the next boot after the write
   * @throws when the write fails or the line would be refused (its message says why)
   */
  write(args: KernelArgs): Promise<NextBoot>;
}
