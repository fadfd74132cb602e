/**
 * FakeSysctlBackend: sysctls in a map. Like the kernel, a key that was never
 * seeded is ENOENT, a read-only key refuses writes with EACCES, and a
 * validator can refuse values with EINVAL. Faults can be injected per
 * operation (`sysctl_read`, `sysctl_write`) and every call is recorded.
 * @module
 */
import { FaultInjector } from "../../platform/mod.ts";
import { type SysctlBackend, SysctlError, sysctlPath } from "./sysctl_backend.ts";

/** The in-memory backend; keys are stored by path (`net/ipv4/ip_forward`). */
export class FakeSysctlBackend implements SysctlBackend {
  readonly faults = new FaultInjector();
  readonly values = new Map<string, string>();
  #readOnly = new Set<string>();
  #validators = new Map<string, (value: string) => boolean>();

  /** Make `key` exist with `value`; `readOnly` keys refuse writes, `accept` filters values. */
  seed(
    key: string,
    value: string,
    options: { readOnly?: boolean; accept?: (value: string) => boolean } = {},
  ): this {
    const path = sysctlPath(key);
    this.values.set(path, value);
    if (options.readOnly) this.#readOnly.add(path);
    if (options.accept) this.#validators.set(path, options.accept);
    return this;
  }

  /** The stored value of `key`, or undefined. */
  get(key: string): string | undefined {
    return this.values.get(sysctlPath(key));
  }

  read(key: string): Promise<string> {
    try {
      this.#check("sysctl_read", key, "read");
      const v = this.values.get(sysctlPath(key));
      if (v === undefined) throw new SysctlError(key, "read", "ENOENT");
      return Promise.resolve(v);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  write(key: string, value: string): Promise<void> {
    try {
      this.#check("sysctl_write", key, "write", value);
      const path = sysctlPath(key);
      if (!this.values.has(path)) throw new SysctlError(key, "write", "ENOENT", value);
      if (this.#readOnly.has(path)) throw new SysctlError(key, "write", "EACCES", value);
      const accept = this.#validators.get(path);
      if (accept && !accept(value)) throw new SysctlError(key, "write", "EINVAL", value);
      this.values.set(path, value.replace(/\n$/, ""));
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Injected faults surface as SysctlErrors carrying the injected errno. */
  #check(op: string, key: string, kind: "read" | "write", value?: string): void {
    try {
      this.faults.check(op, value === undefined ? [key] : [key, value]);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      throw new SysctlError(key, kind, typeof code === "string" ? code : "EIO", value, {
        cause: e,
      });
    }
  }
}
