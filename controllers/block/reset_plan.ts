/**
 * Reset: what it would wipe (pure, from the provisioner's record and the disk's
 * current table) and the wipe itself. "Wipe" means: write the table again
 * without the recorded STATE and EPHEMERAL entries (the commit point: the next
 * boot finds only boot partitions and its provisioner `complete`s the disk,
 * creating and recording both afresh), then zero each removed partition's
 * first and last MiB so no stale superblock or label is left behind. Before
 * the table write, a target that starts with a LUKS2 header is crypto-erased
 * (every keyslot destroyed, the header area zeroed: {@link CryptBackend.erase}),
 * so its data is gone even if the rest of the wipe is cut short. Nothing
 * outside the recorded partitions is written; the ESP and slots are kept by
 * {@link partitionsResetMayFormat}, which never returns a boot partition.
 * @module
 */
import type { BlockBackend, GptPartition, GptTable } from "../../platform/block/mod.ts";
import type { CryptBackend } from "../../platform/crypt/mod.ts";
import { partitionPath } from "./device_path.ts";
import type { ByteRange } from "./decide_provisioning.ts";
import { zeroRanges } from "./execute_plan.ts";
import { ProvisionError } from "./provision_error.ts";
import { partitionsResetMayFormat, type RecordForReset } from "./reset_may_format.ts";
import { mappingName } from "./volume_encryption.ts";

const MiB = 1024 * 1024;

/** One partition a reset would wipe, as an operator is shown it. */
export interface ResetTarget {
  /** GPT name: `STATE` or `EPHEMERAL`. */
  readonly label: string;
  /** The disk's device node. */
  readonly disk: string;
  /** Unique partition GUID, lower-case. */
  readonly guid: string;
  readonly number: number;
  readonly sizeBytes: number;
  readonly firstLba: number;
  readonly lastLba: number;
}

/** A record with the disk it names. */
export interface RecordOnDisk extends RecordForReset {
  readonly disk: string;
}

/**
 * What a reset would wipe: {@link partitionsResetMayFormat} as
 * {@link ResetTarget}s, ordered by GUID (the order the challenge binds). Pure.
 */
export function resetTargets(
  record: RecordOnDisk | undefined,
  current: GptTable | undefined,
  sectorSize: number,
): ResetTarget[] {
  return partitionsResetMayFormat(record, current).map((p) => ({
    label: p.name,
    disk: record!.disk,
    guid: p.uuid.toLowerCase(),
    number: p.number,
    sizeBytes: (p.lastLba - p.firstLba + 1) * sectorSize,
    firstLba: p.firstLba,
    lastLba: p.lastLba,
  })).sort((a, b) => a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : 0);
}

/** The byte ranges a wipe zeroes: each target's first and last `zeroBytes`. Pure. */
export function wipeRanges(
  targets: readonly Pick<ResetTarget, "firstLba" | "lastLba">[],
  sectorSize: number,
  zeroBytes = MiB,
): ByteRange[] {
  return targets.flatMap((t) => {
    const start = t.firstLba * sectorSize;
    const end = (t.lastLba + 1) * sectorSize;
    const head = { offset: start, length: Math.min(zeroBytes, end - start) };
    const tailStart = Math.max(start + head.length, end - zeroBytes);
    return tailStart < end ? [head, { offset: tailStart, length: end - tailStart }] : [head];
  });
}

/** What {@link wipeResetTargets} did. */
export interface WipeResult {
  /** The partitions removed from the table and zeroed. */
  wiped: ResetTarget[];
  /** How the kernel was told (`none` when it could not be: the next boot re-reads). */
  reread: string;
  /**
   * Mappings that would not close (a volume detached but still busy): their
   * headers were erased all the same, and the key dies with the reboot.
   */
  leftOpen?: string[];
}

/** Options of {@link wipeResetTargets}. */
export interface WipeOptions {
  /** Crypto-erases targets holding a LUKS2 header first; without it none is looked for. */
  crypt?: CryptBackend;
  /** A partition's device node. @default partitionPath (`/dev/vda2`, `/dev/nvme0n1p2`) */
  partitionPath?: (disk: string, number: number) => string;
}

/** The LUKS magic, "LUKS\xba\xbe", at offset 0 of a LUKS1 or LUKS2 header. */
const LUKS_MAGIC = [0x4c, 0x55, 0x4b, 0x53, 0xba, 0xbe];

/**
 * Close the mapping (`/dev/mapper/<label>`, unmounted by the shutdown's
 * unmount step before the wipe) and then erase the LUKS header of each target
 * that has one; a mapping that will not close is named in the answer and its
 * header erased anyway. The magic is read through the block backend first, so
 * a node without encrypted volumes never runs cryptsetup. Returns the
 * mappings left open. @throws ProvisionError before anything else is written.
 */
async function eraseLuksHeaders(
  backend: BlockBackend,
  crypt: CryptBackend,
  disk: string,
  targets: readonly ResetTarget[],
  sectorSize: number,
  pathOf: (disk: string, number: number) => string = partitionPath,
): Promise<string[]> {
  const leftOpen: string[] = [];
  for (const t of targets) {
    const head = await backend.read(disk, t.firstLba * sectorSize, LUKS_MAGIC.length);
    if (!LUKS_MAGIC.every((b, i) => head[i] === b)) continue;
    const path = pathOf(disk, t.number);
    // Closing an inactive mapping is a no-op (cryptsetup exit 4).
    await crypt.close(mappingName(t.label)).catch(() => leftOpen.push(mappingName(t.label)));
    try {
      await crypt.erase(path);
    } catch (e) {
      throw new ProvisionError("erase the LUKS2 header of", path, { cause: e });
    }
  }
  return leftOpen;
}

/**
 * Wipe the partitions of `record` on its disk that are still exactly as
 * recorded AND listed in `guids` (what the operator consented to): never
 * more, whatever changed since. Reads the table afresh first.
 * @throws ProvisionError naming the step that failed (the table write is the
 *   commit point: before it nothing changed).
 */
export async function wipeResetTargets(
  backend: BlockBackend,
  record: RecordOnDisk,
  guids: readonly string[],
  options: WipeOptions = {},
): Promise<WipeResult> {
  const disk = record.disk;
  const read = await backend.readGpt(disk);
  const geometry = await backend.geometry(disk);
  const allowed = new Set(guids.map((g) => g.toLowerCase()));
  const wiped = resetTargets(record, read?.table, geometry.logicalSectorSize)
    .filter((t) => allowed.has(t.guid));
  if (!read || wiped.length === 0) return { wiped: [], reread: "none" };
  let leftOpen: string[] = [];
  if (options.crypt) {
    const { crypt, partitionPath: pathOf } = options;
    leftOpen = await eraseLuksHeaders(
      backend,
      crypt,
      disk,
      wiped,
      geometry.logicalSectorSize,
      pathOf,
    );
  }
  const gone = new Set(wiped.map((t) => t.guid));
  const table: GptTable = {
    diskGuid: read.table.diskGuid,
    partitions: read.table.partitions.filter((p: GptPartition) => !gone.has(p.uuid.toLowerCase())),
  };
  try {
    await backend.writeGpt(disk, table);
  } catch (e) {
    throw new ProvisionError("write the partition table of", disk, { cause: e });
  }
  let reread = "none";
  try {
    reread = await backend.rereadPartitions(disk);
  } catch {
    // EBUSY for a lazily unmounted partition, ENOTTY for an image: the next boot re-reads.
  }
  await zeroRanges(backend, disk, wipeRanges(wiped, geometry.logicalSectorSize));
  return leftOpen.length ? { wiped, reread, leftOpen } : { wiped, reread };
}
