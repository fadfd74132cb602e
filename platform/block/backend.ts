/**
 * The block backend: what the disk provisioner may ask of disks. Works on
 * block devices and on image files (where the kernel-facing calls, such as
 * re-reading partitions, fail with ENOTTY as the ioctls do).
 *
 * Idempotence, shared by both implementations:
 * - `writeGpt` rewrites both copies completely; writing the same table twice
 *   yields the same bytes.
 * - `rereadPartitions` converges the kernel's view on the table on disk: it
 *   tries BLKRRPART and, when the disk is busy (EBUSY), applies BLKPG
 *   deletes/adds for exactly the partitions that differ; deleting a partition
 *   that is in use still fails with EBUSY.
 * - `discard` of an already-discarded range succeeds.
 * @module
 */
import type { GptReadResult, GptTable } from "./gpt.ts";
import type { FsInfo } from "./probe.ts";

/** Size and sector sizes of a disk. */
export interface DiskGeometry {
  /** Bytes. */
  size: number;
  logicalSectorSize: number;
  physicalSectorSize: number;
  readOnly: boolean;
}

/** A partition as the kernel currently knows it (bytes). */
export interface KernelPartition {
  number: number;
  start: number;
  size: number;
}

/** How `rereadPartitions` got the kernel in sync. */
export type RereadMethod = "BLKRRPART" | "BLKPG";

/** Everything the disk provisioner may ask of a disk. */
export interface BlockBackend {
  /**
   * Size, sector sizes and read-only flag. An image file reports its length
   * and 512-byte sectors.
   * @throws SysError ENOENT when missing.
   */
  geometry(path: string): Promise<DiskGeometry>;
  /** Read `length` bytes at `offset` (short at the end of the disk). */
  read(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** Write and flush `data` at `offset`. @throws SysError EROFS when read-only. */
  write(path: string, offset: number, data: Uint8Array): Promise<void>;
  /** Read the GPT (primary, else backup); undefined when there is none. */
  readGpt(path: string): Promise<GptReadResult | undefined>;
  /**
   * Write the protective MBR and both GPT copies, then flush. A hybrid MBR
   * whose entries are partitions of `table` (the Raspberry Pi image's boot
   * FAT) is kept in place of the protective one (hybrid_mbr.ts).
   */
  writeGpt(path: string, table: GptTable): Promise<void>;
  /** The kernel's current partitions of the disk (empty for an image file). */
  kernelPartitions(path: string): Promise<KernelPartition[]>;
  /** Bring the kernel's partitions in line with the table on disk. */
  rereadPartitions(path: string): Promise<RereadMethod>;
  /** Discard (TRIM) a sector-aligned byte range. */
  discard(path: string, offset: number, length: number): Promise<void>;
  /** Identify the filesystem at `offset` bytes (0 = the start of `path`). */
  probe(path: string, offset?: number): Promise<FsInfo | undefined>;
}
