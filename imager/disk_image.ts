/**
 * Assembles the disk: a sparse file of the requested size, the EFI System
 * Partition at 1 MiB, and the GPT describing it. The rest of the disk is left
 * free: machined creates STATE and EPHEMERAL on first boot. The table is
 * encoded by platform/block's {@link encodeGpt} and the ESP's type and name
 * come from layout/partitions.ts, the same code and constants the
 * provisioner reads the disk back with.
 */
import {
  type DiskLayout,
  planDisk,
  readImageGpt,
  SECTOR_SIZE,
  writeGptToImage,
} from "../layout/mod.ts";
import { type EspSpec, writeEsp } from "./esp/esp_writer.ts";

export { type DiskLayout, type DiskPlan, ESP_FIRST_LBA, planDisk } from "../layout/mod.ts";

/** Inputs of {@link writeDiskImage}. */
export interface DiskImageSpec extends Omit<EspSpec, "image" | "offset" | "size"> {
  out: string;
  /** Whole disk size in bytes (rounded down to a sector). */
  size: bigint;
  /** ESP size in bytes. */
  espSize: bigint;
  diskGuid: string;
  espGuid: string;
}

/**
 * Write the image at `spec.out`, replacing any previous file, then read the
 * GPT back to verify it.
 * @throws RangeError when the ESP does not fit; CommandError from the FAT
 *   tools; GptVerifyError when the table read back is not the one written.
 */
export async function writeDiskImage(spec: DiskImageSpec): Promise<DiskLayout> {
  const { writes, layout } = planDisk(spec);
  await Deno.remove(spec.out).catch(() => {});
  {
    using f = await Deno.open(spec.out, { write: true, create: true, truncate: true });
    await f.truncate(Number(layout.totalSectors) * SECTOR_SIZE);
  }
  await writeEsp({ ...spec, image: spec.out, offset: layout.espOffset, size: spec.espSize });
  await writeGptToImage(spec.out, writes);
  await readImageGpt(spec.out);
  return layout;
}
