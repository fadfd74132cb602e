/**
 * Carrying out a provisioning plan on the disk, in the order that keeps an
 * interruption recoverable: zero the plan's ranges (new partitions' heads,
 * and when wiping the removed partitions' and the disk's ends), write the
 * whole GPT, bring the kernel's partitions in line, wait for the nodes.
 * Formatting is separate ({@link makeFilesystem}) so that a partition left
 * blank by a crash is formatted by the next run's `leave` decision.
 * @module
 */
import type { BlockBackend } from "../../platform/block/mod.ts";
import type { ByteRange, ProvisioningPlan } from "./decide_provisioning.ts";
import { ProvisionError } from "./provision_error.ts";

/** The largest single zero write. */
const CHUNK = 1024 * 1024;

/**
 * Zero `ranges` of `disk` in chunks of at most 1 MiB.
 * @throws ProvisionError wrapping the backend's SysError.
 */
export async function zeroRanges(
  backend: BlockBackend,
  disk: string,
  ranges: readonly ByteRange[],
): Promise<void> {
  const zeros = new Uint8Array(CHUNK);
  for (const r of ranges) {
    for (let off = 0; off < r.length; off += CHUNK) {
      const n = Math.min(CHUNK, r.length - off);
      try {
        await backend.write(disk, r.offset + off, zeros.subarray(0, n));
      } catch (e) {
        throw new ProvisionError("zero", `${disk}@${r.offset + off}`, { cause: e });
      }
    }
  }
}

/**
 * Write `plan` to `disk` and make the kernel see it. Returns how the kernel
 * was brought in sync (`none` for an image file, which has no kernel view).
 * @throws ProvisionError naming the step that failed.
 */
export async function writePlan(
  backend: BlockBackend,
  disk: string,
  plan: ProvisioningPlan,
): Promise<"BLKRRPART" | "BLKPG" | "none"> {
  await zeroRanges(backend, disk, plan.zero);
  try {
    await backend.writeGpt(disk, plan.table);
  } catch (e) {
    throw new ProvisionError("write the partition table of", disk, { cause: e });
  }
  try {
    return await backend.rereadPartitions(disk);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOTTY") return "none";
    throw new ProvisionError("re-read the partitions of", disk, { cause: e });
  }
}
