/**
 * OCI seccomp profiles (the runtime spec's `linux.seccomp`: defaultAction, architectures,
 * syscalls[{names, action, errnoRet, args}]) as machined carries them to native-ops, which
 * compiles one to a filter before fork (native-ops/src/process/oci.rs). The supported subset:
 * the actions below (not SCMP_ACT_TRACE or SCMP_ACT_NOTIFY: nothing here traces or listens),
 * the comparisons below (not the ordered ones). Config validation (config/schema/seccomp.ts)
 * refuses anything else with its path.
 * @module
 */

/** Actions a profile may name. ERRNO returns `errnoRet` (EPERM when unset). */
export const SECCOMP_ACTIONS = [
  "SCMP_ACT_ALLOW",
  "SCMP_ACT_ERRNO",
  "SCMP_ACT_KILL",
  "SCMP_ACT_KILL_THREAD",
  "SCMP_ACT_KILL_PROCESS",
  "SCMP_ACT_TRAP",
  "SCMP_ACT_LOG",
] as const;
export type SeccompAction = typeof SECCOMP_ACTIONS[number];

/**
 * Argument comparisons a rule may use: all 64 bits, unsigned, as libseccomp's (MASKED_EQ:
 * `arg & value == valueTwo`; LT/LE/GT/GE: `arg` against `value`).
 */
export const SECCOMP_COMPARISONS = [
  "SCMP_CMP_EQ",
  "SCMP_CMP_NE",
  "SCMP_CMP_MASKED_EQ",
  "SCMP_CMP_LT",
  "SCMP_CMP_LE",
  "SCMP_CMP_GT",
  "SCMP_CMP_GE",
] as const;
export type SeccompComparison = typeof SECCOMP_COMPARISONS[number];

/** Architectures a profile may list; the filter always kills other ABIs (x32 and compat too). */
export const SECCOMP_ARCHITECTURES = [
  "SCMP_ARCH_X86_64",
  "SCMP_ARCH_X86",
  "SCMP_ARCH_X32",
  "SCMP_ARCH_AARCH64",
  "SCMP_ARCH_ARM",
] as const;

/** One argument comparison. */
export interface OciSeccompArg {
  readonly index: number;
  readonly value: number;
  readonly valueTwo: number;
  readonly op: SeccompComparison;
}

/** One rule: these syscalls, when every comparison holds, get `action`. */
export interface OciSeccompRule {
  readonly names: readonly string[];
  readonly action: SeccompAction;
  readonly errnoRet?: number;
  readonly args: readonly OciSeccompArg[];
}

/** A profile: rules in order (the first that matches decides), then `defaultAction`. */
export interface OciSeccompProfile {
  readonly defaultAction: SeccompAction;
  readonly defaultErrnoRet?: number;
  readonly architectures: readonly string[];
  readonly syscalls: readonly OciSeccompRule[];
}
