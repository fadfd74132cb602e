/**
 * The GPT of a machined disk image, planned before anything is written: one ESP at
 * 1 MiB, typed and named as layout/partitions.ts says. Shared by the imager,
 * which writes it, and the installer, which lays the same table on the node's disk.
 */
import { encodeGpt, gptGeometry, type GptTable, type GptWrite } from "../platform/block/mod.ts";
import { PARTITION_NAME, PARTITION_TYPE } from "./partitions.ts";
import { SECTOR_SIZE } from "./image_gpt.ts";

/** First LBA of the ESP: 1 MiB, the alignment every modern tool uses. */
export const ESP_FIRST_LBA = 2048;

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
 * named as layout/partitions.ts says, on a disk of `spec.size` bytes.
 * @throws RangeError when the ESP does not fit the disk.
 */
export function planDisk(
  spec: { size: bigint; espSize: bigint; diskGuid: string; espGuid: string },
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
