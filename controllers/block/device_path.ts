/**
 * Device node names: the partition nodes the kernel creates for a disk, the
 * resolution of /dev/disk/by-* links, and a bounded wait for devtmpfs to
 * create a node after the partitions were re-read.
 * @module
 */
import type { Clock } from "../../runtime/mod.ts";

/**
 * The kernel's name for partition `n` of `disk`: a `p` goes between names
 * that end in a digit (`/dev/nvme0n1p2`, `/dev/loop0p1`) and nothing
 * otherwise (`/dev/sda2`).
 */
export function partitionPath(disk: string, n: number): string {
  return /\d$/.test(disk) ? `${disk}p${n}` : `${disk}${n}`;
}

/** The kernel name of a device node (`/dev/vda` → `vda`). */
export function kernelName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Resolve symlinks (`/dev/disk/by-id/...`); the path itself when it cannot be resolved. */
export async function resolveDevice(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/** Thrown when a device node does not appear in time. */
export class DeviceTimeoutError extends Error {
  override name = "DeviceTimeoutError";
  constructor(readonly path: string, readonly timeoutMs: number) {
    super(`Device node "${path}" did not appear within ${timeoutMs} ms`);
  }
}

/**
 * Wait for devtmpfs to create `path` after BLKPG/BLKRRPART, checking every
 * 20 ms up to `timeoutMs`. The kernel creates the node asynchronously and
 * offers nothing to await short of a uevent socket.
 * @throws DeviceTimeoutError when it does not appear.
 */
export async function waitForDeviceNode(
  path: string,
  options: { clock: Clock; timeoutMs?: number; signal?: AbortSignal },
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const deadline = options.clock.now() + timeoutMs;
  for (;;) {
    if (await Deno.stat(path).then(() => true, () => false)) return;
    if (options.clock.now() >= deadline) throw new DeviceTimeoutError(path, timeoutMs);
    await options.clock.sleep(20, options.signal);
  }
}
