/**
 * Everything the provisioning decision needs to know about a disk, read
 * through the block backend in one go: geometry, GPT with each partition's
 * filesystem, a non-protective MBR, a whole-disk filesystem, whether the
 * unpartitioned disk is all zeros at both ends, and what is mounted.
 * {@link gatherDiskFacts} does the reading; the facts are plain data so the
 * decision stays a pure function.
 * @module
 */
import type { BlockBackend, FsInfo, GptPartition } from "../../platform/block/mod.ts";
import { partitionPath } from "./device_path.ts";

/** A GPT partition with what is on it. */
export interface PartitionFacts extends GptPartition {
  /** The filesystem its superblock names, if any. */
  fs?: FsInfo;
  /** No filesystem and its first `zeroBytes` are all zero (only computed without `fs`). */
  blank: boolean;
  /** Its device node is mounted somewhere. */
  mounted: boolean;
  /** Its device node (which may not exist yet). */
  path: string;
}

/** What a disk holds. */
export interface DiskFacts {
  /** The device node read (symlinks resolved). */
  path: string;
  size: number;
  sectorSize: number;
  readOnly: boolean;
  gpt?: {
    diskGuid: string;
    partitions: PartitionFacts[];
    primaryValid: boolean;
    backupValid: boolean;
  };
  /** An MBR with at least one partition that is not GPT's protective 0xEE entry. */
  mbrPartitions: boolean;
  /** A filesystem at offset 0 of the whole disk (only probed without a GPT). */
  wholeDiskFs?: FsInfo;
  /** Without a GPT: the first and last `zeroBytes` of the disk are all zero. */
  blank: boolean;
  /** The whole disk's node is mounted (e.g. a filesystem without partitions). */
  mounted: boolean;
}

/** Options of {@link gatherDiskFacts}. */
export interface GatherOptions {
  /** Device nodes currently mounted (mountinfo sources). */
  mountedSources: ReadonlySet<string>;
  /** How many leading bytes must be zero for "blank". */
  zeroBytes: number;
}

/**
 * Read the facts of the disk at `path` (already resolved to its node).
 * @throws SysError from the backend (ENOENT when the disk is missing, ...).
 */
export async function gatherDiskFacts(
  backend: BlockBackend,
  path: string,
  options: GatherOptions,
): Promise<DiskFacts> {
  const g = await backend.geometry(path);
  const sectorSize = g.logicalSectorSize;
  const gptRead = await backend.readGpt(path);
  const head = await backend.read(path, 0, Math.min(options.zeroBytes, g.size));
  const facts: DiskFacts = {
    path,
    size: g.size,
    sectorSize,
    readOnly: g.readOnly,
    mbrPartitions: hasMbrPartitions(head),
    blank: false,
    mounted: options.mountedSources.has(path),
  };
  if (gptRead) {
    const partitions: PartitionFacts[] = [];
    for (const p of gptRead.table.partitions) {
      const offset = p.firstLba * sectorSize;
      const size = (p.lastLba - p.firstLba + 1) * sectorSize;
      const fs = await backend.probe(path, offset);
      const node = partitionPath(path, p.number);
      const blank = fs === undefined &&
        isZero(await backend.read(path, offset, Math.min(options.zeroBytes, size)));
      partitions.push({ ...p, fs, blank, mounted: options.mountedSources.has(node), path: node });
    }
    facts.gpt = {
      diskGuid: gptRead.table.diskGuid,
      partitions,
      primaryValid: gptRead.primaryValid,
      backupValid: gptRead.backupValid,
    };
    return facts;
  }
  facts.wholeDiskFs = await backend.probe(path, 0);
  const tailStart = Math.max(0, g.size - options.zeroBytes);
  facts.blank = isZero(head) && isZero(await backend.read(path, tailStart, g.size - tailStart));
  return facts;
}

/** Whether the boot sector holds an MBR with a partition other than GPT's protective one. */
export function hasMbrPartitions(sector0: Uint8Array): boolean {
  if (sector0.length < 512 || sector0[510] !== 0x55 || sector0[511] !== 0xaa) return false;
  const v = new DataView(sector0.buffer, sector0.byteOffset, 512);
  for (let i = 0; i < 4; i++) {
    const e = 446 + 16 * i;
    const type = sector0[e + 4];
    const sectors = v.getUint32(e + 12, true);
    if (type !== 0 && type !== 0xee && sectors > 0) return true;
  }
  return false;
}

/** Whether every byte is zero. */
export function isZero(bytes: Uint8Array): boolean {
  const words = bytes.length >>> 3;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < words; i++) if (v.getBigUint64(i * 8) !== 0n) return false;
  for (let i = words * 8; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}
