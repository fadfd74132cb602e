/**
 * `machine.seccomp_profiles`: named seccomp profiles in the OCI runtime spec's format
 * (`defaultAction`, `architectures`, `syscalls[{names, action, errnoRet, args}]`, its own
 * camelCase keys, so a profile from an OCI runtime pastes in), for services that say
 * `sandbox.seccomp: <name>`. Unknown syscall names, actions and comparisons are refused with a
 * suggestion; what machined does not support (SCMP_ACT_TRACE, SCMP_ACT_NOTIFY, the ordered
 * comparisons, `includes`/`excludes`, `flags`, `listenerPath`) is refused by name.
 *
 * @module
 */
import * as v from "valibot";
import {
  type OciSeccompProfile,
  SECCOMP_ACTIONS,
  SECCOMP_ARCHITECTURES,
  SECCOMP_COMPARISONS,
  SYSCALL_NAMES,
} from "../../platform/process/mod.ts";
import { suggest } from "../suggest.ts";
import { checkWithHint, quote } from "./hints.ts";
import { mapOf, mapping } from "./mapping.ts";
import { choice } from "./primitives.ts";

/** At most this many profiles, rules per profile, names per rule. */
export const MAX_SECCOMP_PROFILES = 16;
export const MAX_SECCOMP_RULES = 512;
/** A profile's name: also what `sandbox.seccomp` says. */
export const SECCOMP_PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const SYSCALLS = [...SYSCALL_NAMES];

const SyscallName = v.pipe(
  v.string("expected a syscall name such as mkdirat"),
  checkWithHint(
    (s: string) => SYSCALL_NAMES.has(s),
    (issue) => `unknown syscall ${quote(issue.input)}`,
    (s) => {
      const near = suggest(String(s), SYSCALLS);
      return near ? `did you mean "${near}"?` : "see syscalls(2) for the names";
    },
  ),
);

const Errno = v.pipe(
  v.number("expected an errno number"),
  v.integer("expected an integer errno"),
  v.minValue(0, "an errno is 0 to 4095"),
  v.maxValue(4095, "an errno is 0 to 4095"),
);

const ArgSchema = mapping({
  index: v.pipe(v.number("expected an argument index"), v.integer(), v.minValue(0), v.maxValue(5)),
  value: v.pipe(
    v.number("expected a number"),
    v.integer("expected an integer"),
    v.minValue(0, "argument values are unsigned"),
    v.maxValue(Number.MAX_SAFE_INTEGER, "argument values are at most 2^53-1 here"),
  ),
  valueTwo: v.optional(
    v.pipe(
      v.number("expected a number"),
      v.integer(),
      v.minValue(0),
      v.maxValue(Number.MAX_SAFE_INTEGER),
    ),
    0,
  ),
  op: choice(SECCOMP_COMPARISONS),
});

const RuleSchema = mapping({
  names: v.pipe(
    v.array(SyscallName, "expected a list of syscall names"),
    v.minLength(1, "a rule names at least one syscall"),
    v.maxLength(MAX_SECCOMP_RULES, `at most ${MAX_SECCOMP_RULES} names in a rule`),
  ),
  action: choice(SECCOMP_ACTIONS),
  errnoRet: v.optional(Errno),
  args: v.optional(
    v.pipe(v.array(ArgSchema, "expected a list of comparisons"), v.maxLength(6)),
    [],
  ),
  comment: v.optional(v.string()),
});

/** One OCI seccomp profile. */
export const SeccompProfileSchema = v.pipe(
  mapping({
    defaultAction: choice(SECCOMP_ACTIONS),
    defaultErrnoRet: v.optional(Errno),
    architectures: v.optional(v.array(choice(SECCOMP_ARCHITECTURES), "expected a list"), []),
    syscalls: v.optional(
      v.pipe(
        v.array(RuleSchema, "expected a list of rules"),
        v.maxLength(MAX_SECCOMP_RULES, `at most ${MAX_SECCOMP_RULES} rules`),
      ),
      [],
    ),
  }),
  v.transform((p): OciSeccompProfile => ({
    defaultAction: p.defaultAction,
    ...(p.defaultErrnoRet !== undefined ? { defaultErrnoRet: p.defaultErrnoRet } : {}),
    architectures: p.architectures,
    syscalls: p.syscalls.map((r) => ({
      names: r.names,
      action: r.action,
      ...(r.errnoRet !== undefined ? { errnoRet: r.errnoRet } : {}),
      args: r.args.map((a) => ({ index: a.index, value: a.value, valueTwo: a.valueTwo, op: a.op })),
    })),
  })),
);

const ProfileName = v.pipe(
  v.string("expected a profile name"),
  v.regex(
    SECCOMP_PROFILE_NAME,
    (issue) =>
      `invalid seccomp profile name ${quote(issue.input)}: lower-case letters, digits, _ and -`,
  ),
  v.check(
    (s: string) => s !== "default" && s !== "unconfined",
    (issue) => `${quote(issue.input)} is a built-in profile; name yours otherwise`,
  ),
);

/** `machine.seccomp_profiles`. */
export const SeccompProfilesSchema = v.pipe(
  mapOf(ProfileName, SeccompProfileSchema, "expected a map of profile name to OCI profile"),
  v.check(
    (m) => Object.keys(m).length <= MAX_SECCOMP_PROFILES,
    `at most ${MAX_SECCOMP_PROFILES} seccomp profiles`,
  ),
  v.description(
    "Seccomp profiles in the OCI runtime spec's JSON format (defaultAction, architectures, " +
      "syscalls[{names, action, errnoRet, args}]) that a service names with " +
      "`sandbox.seccomp: <name>`. Rules are tried in order and the first that matches decides; " +
      "other ABIs (x32, 32-bit compat) are always killed. Supported actions: SCMP_ACT_ALLOW, " +
      "ERRNO (errnoRet, EPERM when unset), KILL, KILL_THREAD, KILL_PROCESS, TRAP, LOG; " +
      "comparisons (64-bit, unsigned): SCMP_CMP_EQ, NE, MASKED_EQ, LT, LE, GT, GE. A syscall the node's architecture lacks is " +
      "skipped (docs/hardening.md).",
  ),
  v.examples([{
    "no-mkdir": {
      defaultAction: "SCMP_ACT_ALLOW",
      architectures: [],
      syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1, args: [] }],
    },
  }]),
);
