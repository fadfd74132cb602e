/**
 * Reading and writing sysctls (files under /proc/sys) behind a small
 * interface, so the sysctl controller runs root-free against
 * {@link FakeSysctlBackend} or a temp directory, and for real against
 * /proc/sys (as root, in a network namespace for the tests).
 * @module
 */

/**
 * Kernel parameters by dotted (`net.ipv4.ip_forward`) or slashed
 * (`net/ipv4/conf/eth0.100/forwarding`) name.
 *
 * Idempotence: writing the value a key already has is harmless; reads are pure.
 */
export interface SysctlBackend {
  /**
   * The value, without its trailing newline (multi-value keys keep their tabs).
   * @throws SysctlError, code ENOENT for an unknown key
   */
  read(key: string): Promise<string>;
  /**
   * Write `value`; never creates a key.
   * @throws SysctlError: ENOENT unknown key, EINVAL value refused, EACCES read-only key
   */
  write(key: string, value: string): Promise<void>;
}

/** A sysctl read or write that failed, with the key, the errno code and the cause. */
export class SysctlError extends Error {
  override name = "SysctlError";
  constructor(
    readonly key: string,
    readonly op: "read" | "write",
    /** Symbolic errno, e.g. `ENOENT`, `EINVAL`, `EACCES`; `EIO` when unknown. */
    readonly code: string,
    readonly value?: string,
    options?: ErrorOptions,
  ) {
    super(
      op === "read"
        ? `Cannot read sysctl "${key}": ${code}`
        : `Cannot write sysctl "${key}" = "${value}": ${code}`,
      options,
    );
  }

  /** The key does not exist in this kernel (or its module is not loaded). */
  get unknown(): boolean {
    return this.code === "ENOENT";
  }
}

/** True when `e` is a {@link SysctlError} for a key the kernel does not have. */
export function isUnknownSysctl(e: unknown): e is SysctlError {
  return e instanceof SysctlError && e.unknown;
}

/**
 * The path of `key` under the sysctl root: dots become slashes unless the key
 * is already slashed (so interface names with dots stay expressible).
 * @throws RangeError for an empty key or one that climbs out (`..`)
 */
export function sysctlPath(key: string): string {
  const rel = key.includes("/") ? key : key.replaceAll(".", "/");
  if (rel === "" || rel.split("/").some((p) => p === "" || p === "." || p === "..")) {
    throw new RangeError(`invalid sysctl name "${key}"`);
  }
  return rel;
}

/** Values as the kernel compares them: trimmed, whitespace runs as one space. */
export function normalizeSysctlValue(value: string): string {
  return value.trim().split(/\s+/).join(" ");
}
