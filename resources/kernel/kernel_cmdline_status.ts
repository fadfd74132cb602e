/**
 * KernelCmdlineStatus: the kernel command line the node booted with (/proc/cmdline), the one
 * `machine.kernel.args` asks for, the one the next boot of the booted slot will use, and
 * whether a reboot (or, under Secure Boot, a signed upgrade) is still needed, with the reason.
 * One per node; written only by kernel.KernelCmdlineController; docs/kernel.md.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const KERNEL_CMDLINE_STATUS = "KernelCmdlineStatus";
/** The single KernelCmdlineStatus's id. */
export const KERNEL_CMDLINE_STATUS_ID = "cmdline";

/**
 * `booted`: the booted line has what the config asks for. `pending-reboot`: the booted slot's
 * entry has it, the running kernel not yet. `pending-upgrade`: the line is inside the signed
 * UKI and only a signed upgrade bundle can carry it. `unwritable`: it could not be written
 * (the reason says why; retried).
 */
export type KernelCmdlineState = "booted" | "pending-reboot" | "pending-upgrade" | "unwritable";

export interface KernelCmdlineStatusSpec {
  /** /proc/cmdline as the kernel shows it (trimmed); printed escaped. */
  readonly booted: string;
  /** `machine.kernel.args.add`. */
  readonly desiredAdd: readonly string[];
  /** `machine.kernel.args.remove`. */
  readonly desiredRemove: readonly string[];
  /**
   * The command line the booted slot's entry holds now (what the next boot uses); "" when
   * the slot boots a UKI (its line is signed inside it) or there is no slot (dev mode).
   */
  readonly next: string;
  /** `add` words the booted line lacks, and `-word` for `remove` words it still has. */
  readonly pending: readonly string[];
  readonly state: KernelCmdlineState;
  /** Why it is pending (or unwritable), and what makes it take effect; "" when booted. */
  readonly reason: string;
}

export const kernelCmdlineStatusDescriptor: ResourceDescriptor<
  typeof KERNEL_CMDLINE_STATUS,
  KernelCmdlineStatusSpec
> = {
  type: KERNEL_CMDLINE_STATUS,
  namespace: "kernel",
  aliases: ["kernelcmdlinestatus", "kernelcmdlinestatuses", "kernelcmdline", "cmdline", "kcs"],
  description:
    "The kernel command line: booted, desired by machine.kernel.args, and pending a reboot",
  columns: [
    { header: "STATE", value: (s) => s.state },
    { header: "PENDING", value: (s) => s.pending.join(" ") },
    { header: "BOOTED", value: (s) => s.booted },
    { header: "REASON", value: (s) => s.reason },
  ],
};
