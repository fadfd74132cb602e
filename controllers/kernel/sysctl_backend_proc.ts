/**
 * ProcSysctlBackend: sysctls as files under a root directory, /proc/sys by
 * default; tests point it at a temp tree. net.* keys are per network
 * namespace, so a process in a fresh netns changes only that namespace's.
 * @module
 */
import { type SysctlBackend, SysctlError, sysctlPath } from "./sysctl_backend.ts";

/** The real backend. */
export class ProcSysctlBackend implements SysctlBackend {
  /** @param root Directory holding the sysctl tree. @default "/proc/sys" */
  constructor(readonly root = "/proc/sys") {}

  async read(key: string): Promise<string> {
    try {
      return (await Deno.readTextFile(`${this.root}/${sysctlPath(key)}`)).replace(/\n$/, "");
    } catch (e) {
      throw new SysctlError(key, "read", codeOf(e), undefined, { cause: e });
    }
  }

  async write(key: string, value: string): Promise<void> {
    try {
      // create: false — a missing key is ENOENT, never a new file.
      await Deno.writeTextFile(`${this.root}/${sysctlPath(key)}`, value, { create: false });
    } catch (e) {
      throw new SysctlError(key, "write", codeOf(e), value, { cause: e });
    }
  }
}

function codeOf(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "ENOENT";
  if (e instanceof RangeError) return "EINVAL";
  const code = (e as { code?: unknown })?.code;
  return typeof code === "string" ? code : "EIO";
}
