/**
 * Assembles the disk: a sparse file of the requested size, the EFI System
 * Partition at 1 MiB, and the GPT describing it. The rest of the disk is left
 * free: machined creates STATE and EPHEMERAL on first boot.
 */
import { ALIGN_SECTORS, buildGpt, ESP_TYPE_GUID, lastUsableLba, SECTOR_SIZE } from "./gpt.ts";
import { readGpt } from "./gpt_decode.ts";
import { type EspSpec, writeEsp } from "./esp/esp_writer.ts";

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

/** GPT partition name of the ESP (what machined looks the partition up by). */
export const ESP_PARTITION_NAME = "EFI";

/**
 * Write the image at `spec.out`, replacing any previous file, then read the
 * GPT back to verify it.
 * @throws RangeError when the ESP does not fit; CommandError from the FAT tools.
 */
export async function writeDiskImage(spec: DiskImageSpec): Promise<DiskLayout> {
  const totalSectors = spec.size / BigInt(SECTOR_SIZE);
  const first = BigInt(ALIGN_SECTORS);
  const espSectors = spec.espSize / BigInt(SECTOR_SIZE);
  const last = first + espSectors - 1n;
  if (last > lastUsableLba(totalSectors)) {
    throw new RangeError(`ESP of ${spec.espSize} bytes does not fit a ${spec.size}-byte disk`);
  }
  const gpt = buildGpt({
    totalSectors,
    diskGuid: spec.diskGuid,
    partitions: [{
      typeGuid: ESP_TYPE_GUID,
      uniqueGuid: spec.espGuid,
      name: ESP_PARTITION_NAME,
      firstLba: first,
      lastLba: last,
    }],
  });
  await Deno.remove(spec.out).catch(() => {});
  {
    using f = await Deno.open(spec.out, { write: true, create: true, truncate: true });
    await f.truncate(Number(totalSectors * BigInt(SECTOR_SIZE)));
  }
  const espOffset = first * BigInt(SECTOR_SIZE);
  await writeEsp({ ...spec, image: spec.out, offset: espOffset, size: spec.espSize });
  {
    using f = await Deno.open(spec.out, { write: true });
    await writeAll(f, gpt.head);
    await f.seek(gpt.tailOffset, Deno.SeekMode.Start);
    await writeAll(f, gpt.tail);
  }
  await readGpt(spec.out);
  const free = (lastUsableLba(totalSectors) - last) * BigInt(SECTOR_SIZE);
  return { espOffset, espSize: spec.espSize, totalSectors, free };
}

async function writeAll(f: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await f.write(bytes.subarray(off));
}
