/**
 * Assembles the disk: a sparse file of the requested size, the EFI System
 * Partition at 1 MiB, and the GPT describing it. The rest of the disk is left
 * free: machined creates STATE and EPHEMERAL on first boot. The table is
 * encoded by platform/block's {@link encodeGpt} and the ESP's type and name
 * come from controllers/block/layout.ts, the same code and constants the
 * provisioner reads the disk back with.
 */
import { encodeGpt, gptGeometry, type GptTable, type GptWrite } from "../platform/block/mod.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "../controllers/block/layout.ts";
import { readImageGpt, SECTOR_SIZE, writeGptToImage } from "./image_gpt.ts";
import { type EspSpec, writeEsp } from "./esp/esp_writer.ts";

/** First LBA of the ESP: 1 MiB, the alignment every modern tool uses. */
export const ESP_FIRST_LBA = 2048;

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

/** Where the ESP ended up. */
export interface DiskLayout {
  espOffset: bigint;
  espSize: bigint;
  totalSectors: bigint;
  /** Bytes left unpartitioned after the ESP. */
  free: bigint;
}

/** The GPT of a disk image, before anything is written. */
export interface DiskPlan {
  table: GptTable;
  /** Byte ranges to write: protective MBR, primary and backup copies. */
  writes: GptWrite[];
  layout: DiskLayout;
}

/**
 * Lay out the image's GPT: one ESP from {@link ESP_FIRST_LBA}, typed and
 * named as controllers/block/layout.ts says, on a disk of `spec.size` bytes.
 * @throws RangeError when the ESP does not fit the disk.
 */
export function planDisk(
  spec: Pick<DiskImageSpec, "size" | "espSize" | "diskGuid" | "espGuid">,
): DiskPlan {
  const totalSectors = spec.size / BigInt(SECTOR_SIZE);
  const diskBytes = Number(totalSectors) * SECTOR_SIZE;
  const g = gptGeometry(diskBytes, SECTOR_SIZE);
  const last = ESP_FIRST_LBA + Number(spec.espSize / BigInt(SECTOR_SIZE)) - 1;
  if (last > g.lastUsableLba) {
    throw new RangeError(`ESP of ${spec.espSize} bytes does not fit a ${spec.size}-byte disk`);
  }
  const table: GptTable = {
    diskGuid: spec.diskGuid,
    partitions: [{
      number: 1,
      type: PARTITION_TYPE.EFI_SYSTEM,
      uuid: spec.espGuid,
      name: PARTITION_NAME.EFI,
      firstLba: ESP_FIRST_LBA,
      lastLba: last,
      attributes: 0n,
    }],
  };
  return {
    table,
    writes: encodeGpt(table, diskBytes, SECTOR_SIZE),
    layout: {
      espOffset: BigInt(ESP_FIRST_LBA * SECTOR_SIZE),
      espSize: spec.espSize,
      totalSectors,
      free: BigInt((g.lastUsableLba - last) * SECTOR_SIZE),
    },
  };
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
