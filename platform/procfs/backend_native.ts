/**
 * NativeProcBackend: plain reads of the real tree. It needs no native-ops:
 * /proc and cgroupfs are text files. Reading another user's /proc/PID/fd or
 * smaps_rollup needs root (or CAP_SYS_PTRACE); the error says so.
 * @module
 */
import { type ProcBackend, ProcError } from "./backend.ts";

/** The real /proc (or any tree). */
export class NativeProcBackend implements ProcBackend {
  /** @param root the tree's directory. @default "/proc" */
  constructor(readonly root = "/proc") {}

  async readText(path: string): Promise<string> {
    const full = this.#full(path);
    try {
      return await Deno.readTextFile(full);
    } catch (e) {
      throw new ProcError("read", full, gone(e), e);
    }
  }

  async readLink(path: string): Promise<string> {
    const full = this.#full(path);
    try {
      return await Deno.readLink(full);
    } catch (e) {
      throw new ProcError("readlink", full, gone(e), e);
    }
  }

  async list(path: string): Promise<string[]> {
    const full = this.#full(path);
    try {
      const names: string[] = [];
      for await (const entry of Deno.readDir(full)) names.push(entry.name);
      return names;
    } catch (e) {
      throw new ProcError("list", full, gone(e), e);
    }
  }

  #full(path: string): string {
    return path === "" ? this.root : `${this.root}/${path}`;
  }
}

/** ENOENT, or ESRCH (a /proc/PID that is exiting). */
function gone(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound ||
    (e instanceof Error && /ESRCH|os error 3\b/.test(e.message));
}
