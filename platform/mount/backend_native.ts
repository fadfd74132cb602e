/**
 * NativeMountBackend: the mount backend over native-ops (the only file in
 * platform/mount that touches the addon).
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import type { MountBackend, MountRequest, UnmountResult } from "./backend.ts";
import { type MountInfo, parseMountInfo } from "./mountinfo.ts";

interface MountNative {
  mount(
    source: string | null,
    target: string,
    fstype: string | null,
    flags: string[],
    data: string | null,
  ): Promise<void>;
  unmount(target: string, detachFallback: boolean): Promise<UnmountResult>;
  remountReadOnly(target: string, bindOnly: boolean): Promise<void>;
  bindMount(source: string, target: string, recursive: boolean, readOnly: boolean): Promise<void>;
}

/** Mounts in the caller's mount namespace. */
export class NativeMountBackend implements MountBackend {
  readonly #native: MountNative;
  readonly #mountinfo: string;

  constructor(
    native: MountNative = loadNative() as unknown as MountNative,
    mountinfo = "/proc/self/mountinfo",
  ) {
    this.#native = native;
    this.#mountinfo = mountinfo;
  }

  mount(req: MountRequest): Promise<void> {
    return this.#native.mount(
      req.source ?? null,
      req.target,
      req.fstype ?? null,
      req.flags ?? [],
      req.data ?? null,
    );
  }

  unmount(target: string, options: { detach?: boolean } = {}): Promise<UnmountResult> {
    return this.#native.unmount(target, options.detach ?? false);
  }

  remountReadOnly(target: string, options: { bindOnly?: boolean } = {}): Promise<void> {
    return this.#native.remountReadOnly(target, options.bindOnly ?? false);
  }

  bind(
    source: string,
    target: string,
    options: { recursive?: boolean; readOnly?: boolean } = {},
  ): Promise<void> {
    return this.#native.bindMount(
      source,
      target,
      options.recursive ?? false,
      options.readOnly ?? false,
    );
  }

  async mounts(): Promise<MountInfo[]> {
    return parseMountInfo(await Deno.readTextFile(this.#mountinfo));
  }
}
