/**
 * KernelParamStatus: one sysctl from `machine.sysctls`: the value wanted, the
 * value the kernel reports, and the value it had before machined first
 * changed it (restored when the key leaves the config). The id is the key as
 * configured.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const KERNEL_PARAM_STATUS = "KernelParamStatus";

export interface KernelParamStatusSpec {
  /** As configured, e.g. `net.ipv4.ip_forward`. */
  readonly key: string;
  /** The configured value. */
  readonly desired: string;
  /** What /proc/sys reads back (whitespace normalised); null when unreadable. */
  readonly current: string | null;
  /**
   * The value before machined first wrote it (whitespace normalised; the raw
   * value is what gets restored); null when the key is unknown.
   */
  readonly default: string | null;
  /** `current` equals `desired` (compared with whitespace normalised). */
  readonly applied: boolean;
  /** Why it is not applied, e.g. `unknown sysctl`; empty when applied. */
  readonly error: string;
}

export const kernelParamStatusDescriptor: ResourceDescriptor<
  typeof KERNEL_PARAM_STATUS,
  KernelParamStatusSpec
> = {
  type: KERNEL_PARAM_STATUS,
  namespace: "kernel",
  aliases: ["kernelparamstatus", "kernelparamstatuses", "sysctls", "sysctl", "kps"],
  description: "A sysctl from the machine config: desired, current and default value",
  columns: [
    { header: "KEY", value: (s) => s.key },
    { header: "DESIRED", value: (s) => s.desired },
    { header: "CURRENT", value: (s) => s.current ?? "" },
    { header: "DEFAULT", value: (s) => s.default ?? "" },
    { header: "APPLIED", value: (s) => String(s.applied) },
    { header: "ERROR", value: (s) => s.error },
  ],
};
