/**
 * A process's sandbox: the seccomp profile installed between fork and exec,
 * the capabilities it keeps, and no_new_privs; and what the kernel shows of
 * it once the program runs (/proc/PID/status), so a status reports the
 * sandbox in force rather than the one asked for.
 * @module
 */
import type { OciSeccompProfile } from "./seccomp_profile.ts";

/**
 * Seccomp profiles native-ops builds: `default` refuses (EPERM) the syscalls a
 * service never needs on this node (mount, module loading, kexec, reboot, bpf,
 * ptrace, keyctl, namespaces, the clock...; docs/hardening.md lists them),
 * `unconfined` installs no filter.
 */
export const SECCOMP_PROFILES = ["default", "unconfined"] as const;
/** A seccomp profile name. */
export type SeccompProfile = typeof SECCOMP_PROFILES[number];

/** Capability names by number (linux/capability.h, up to CAP_CHECKPOINT_RESTORE = 40). */
export const CAPABILITIES = [
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_DAC_READ_SEARCH",
  "CAP_FOWNER",
  "CAP_FSETID",
  "CAP_KILL",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETPCAP",
  "CAP_LINUX_IMMUTABLE",
  "CAP_NET_BIND_SERVICE",
  "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN",
  "CAP_NET_RAW",
  "CAP_IPC_LOCK",
  "CAP_IPC_OWNER",
  "CAP_SYS_MODULE",
  "CAP_SYS_RAWIO",
  "CAP_SYS_CHROOT",
  "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT",
  "CAP_SYS_ADMIN",
  "CAP_SYS_BOOT",
  "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE",
  "CAP_SYS_TIME",
  "CAP_SYS_TTY_CONFIG",
  "CAP_MKNOD",
  "CAP_LEASE",
  "CAP_AUDIT_WRITE",
  "CAP_AUDIT_CONTROL",
  "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE",
  "CAP_MAC_ADMIN",
  "CAP_SYSLOG",
  "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND",
  "CAP_AUDIT_READ",
  "CAP_PERFMON",
  "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
] as const;
/** A capability name such as `CAP_NET_BIND_SERVICE`. */
export type CapabilityName = typeof CAPABILITIES[number];

/** What a process is confined by. */
export interface ProcessSandbox {
  /** `default`, `unconfined`, or the name of `seccompProfile`. */
  readonly seccomp: string;
  /** An OCI profile (`machine.seccomp_profiles`), compiled by native-ops; replaces `seccomp`'s. */
  readonly seccompProfile?: OciSeccompProfile;
  /**
   * Capabilities the process keeps; every other one leaves its bounding,
   * permitted, effective, inheritable and ambient sets. Unset: inherited as
   * they are (the sandbox touches no capability).
   */
  readonly capabilities?: readonly CapabilityName[];
  /**
   * Paths bound read-only onto themselves in a private mount namespace
   * (unshared in the child before the filter, which refuses mount(2)); a
   * write under one gets EROFS while the host's view stays writable.
   */
  readonly readOnlyPaths?: readonly string[];
  /**
   * Paths hidden in the same private mount namespace: an empty read-only tmpfs (mode 000) over a
   * directory, /dev/null bound read-only over anything else; a missing one is skipped.
   */
  readonly maskedPaths?: readonly string[];
}

/** The sandbox a running process is in, as /proc/PID/status showed it right after exec. */
export interface SandboxInForce {
  /** The profile asked for (`default`, `unconfined` or a configured profile's name). */
  readonly profile: string;
  /** The kernel's seccomp mode: `filter` when a filter is installed. */
  readonly seccomp: "disabled" | "strict" | "filter";
  readonly noNewPrivs: boolean;
  /** CapEff, by name. */
  readonly effective: readonly string[];
  /** CapBnd, by name; the most the process or its children can ever hold. */
  readonly bounding: readonly string[];
  /** CapAmb, by name; what survives an exec as another user. */
  readonly ambient: readonly string[];
  /** The asked `readOnlyPaths` that /proc/PID/mountinfo shows mounted read-only. */
  readonly readOnly?: readonly string[];
  /**
   * The asked `maskedPaths` that /proc/PID/mountinfo shows hidden: a read-only tmpfs, or
   * /dev/null bound, mounted on the path. A path that did not exist at spawn is not listed.
   */
  readonly masked?: readonly string[];
}

/** One line of /proc/PID/mountinfo, the fields the sandbox checks use. */
interface MountLine {
  readonly root: string;
  readonly mountPoint: string;
  readonly readOnly: boolean;
  readonly fsType: string;
}

/** The mounts of a /proc/PID/mountinfo text (octal escapes in paths undone). Pure. */
function mountLines(mountinfo: string): MountLine[] {
  const unescape = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const out: MountLine[] = [];
  for (const line of mountinfo.split("\n")) {
    const f = line.split(" ");
    const dash = f.indexOf("-");
    if (f.length < 6 || dash < 6) continue;
    out.push({
      root: unescape(f[3]),
      mountPoint: unescape(f[4]),
      readOnly: f[5].split(",").includes("ro"),
      fsType: f[dash + 1] ?? "",
    });
  }
  return out;
}

/** Of `paths`, those a /proc/PID/mountinfo text shows as read-only mount points. Pure. */
export function readOnlyMounts(paths: readonly string[], mountinfo: string): string[] {
  const ro = new Set(mountLines(mountinfo).filter((m) => m.readOnly).map((m) => m.mountPoint));
  return paths.filter((p) => ro.has(p));
}

/**
 * Of `paths`, those a /proc/PID/mountinfo text shows hidden: the last mount on the path is
 * read-only and either a tmpfs (a masked directory) or /dev/null bound (a masked file). Pure.
 */
export function maskedMounts(paths: readonly string[], mountinfo: string): string[] {
  const top = new Map<string, MountLine>();
  for (const m of mountLines(mountinfo)) top.set(m.mountPoint, m);
  return paths.filter((p) => {
    const m = top.get(p);
    return m !== undefined && m.readOnly && (m.fsType === "tmpfs" || m.root === "/null");
  });
}

/** The number of a capability name. @throws TypeError for an unknown name. */
export function capabilityNumber(name: string): number {
  const n = (CAPABILITIES as readonly string[]).indexOf(name);
  if (n < 0) throw new TypeError(`Unknown capability ${JSON.stringify(name)}`);
  return n;
}

/** Names of the bits set in a /proc capability mask (16 hex digits); unknown bits as `cap_<n>`. */
export function capabilityNames(hexMask: string): string[] {
  let mask = BigInt(`0x${hexMask.trim() || "0"}`);
  const names: string[] = [];
  for (let n = 0; mask > 0n; n++, mask >>= 1n) {
    if (mask & 1n) names.push(CAPABILITIES[n] ?? `cap_${n}`);
  }
  return names;
}

const SECCOMP_MODES = ["disabled", "strict", "filter"] as const;

/**
 * The sandbox in a /proc/PID/status text. Pure.
 * @throws RangeError when a field is missing (not a Linux status file).
 */
export function parseSandboxStatus(profile: string, status: string): SandboxInForce {
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(status);
    if (!m) throw new RangeError(`/proc status has no ${name} line`);
    return m[1];
  };
  return {
    profile,
    seccomp: SECCOMP_MODES[Number(field("Seccomp"))] ?? "filter",
    noNewPrivs: field("NoNewPrivs") === "1",
    effective: capabilityNames(field("CapEff")),
    bounding: capabilityNames(field("CapBnd")),
    ambient: capabilityNames(field("CapAmb")),
  };
}

/**
 * The sandbox `pid` is in, or null when it cannot be read: the process has
 * already exited and been reaped (ENOENT, or ESRCH while it is being reaped).
 * Never throws: the process is running or gone either way, and a spawn that
 * succeeded must not fail because of its status.
 */
export async function readSandbox(
  pid: number,
  profile: string,
  proc = "/proc",
  paths: Pick<ProcessSandbox, "readOnlyPaths" | "maskedPaths"> = {},
): Promise<SandboxInForce | null> {
  const readOnlyPaths = paths.readOnlyPaths ?? [];
  const maskedPaths = paths.maskedPaths ?? [];
  try {
    const s = parseSandboxStatus(profile, await Deno.readTextFile(`${proc}/${pid}/status`));
    if (readOnlyPaths.length === 0 && maskedPaths.length === 0) return s;
    const info = await Deno.readTextFile(`${proc}/${pid}/mountinfo`);
    return {
      ...s,
      ...(readOnlyPaths.length ? { readOnly: readOnlyMounts(readOnlyPaths, info) } : {}),
      ...(maskedPaths.length ? { masked: maskedMounts(maskedPaths, info) } : {}),
    };
  } catch {
    return null;
  }
}

/** The sandbox a fake process is taken to be in: exactly what its spec asked for. Pure. */
export function declaredSandbox(
  sandbox: ProcessSandbox,
  noNewPrivs: boolean,
  inherited: readonly string[] = CAPABILITIES,
): SandboxInForce {
  const kept = sandbox.capabilities ?? inherited;
  const ordered = CAPABILITIES.filter((c) => kept.includes(c));
  return {
    profile: sandbox.seccomp,
    seccomp: sandbox.seccomp === "unconfined" ? "disabled" : "filter",
    noNewPrivs,
    effective: ordered,
    bounding: ordered,
    ambient: sandbox.capabilities ? ordered : [],
    ...(sandbox.readOnlyPaths?.length ? { readOnly: [...sandbox.readOnlyPaths] } : {}),
    ...(sandbox.maskedPaths?.length ? { masked: [...sandbox.maskedPaths] } : {}),
  };
}
