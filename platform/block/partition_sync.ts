/**
 * The BLKPG fallback plan: which kernel partitions to delete and which to add
 * so the kernel's view matches a partition table, touching nothing that
 * already matches (so a mounted, unchanged partition is never deleted).
 * @module
 */
import type { GptPartition } from "./gpt.ts";
import type { KernelPartition } from "./backend.ts";

/** One BLKPG step (bytes). */
export type PartitionOp =
  | { op: "delete"; number: number }
  | { op: "add"; number: number; start: number; size: number };

/** Deletes first (so numbers and ranges free up), then adds, both by number. */
export function planPartitionSync(
  kernel: readonly KernelPartition[],
  table: readonly GptPartition[],
  sectorSize: number,
): PartitionOp[] {
  const want = new Map(table.map((p) => [p.number, {
    number: p.number,
    start: p.firstLba * sectorSize,
    size: (p.lastLba - p.firstLba + 1) * sectorSize,
  }]));
  const same = (a: KernelPartition, b?: KernelPartition) =>
    b !== undefined && a.start === b.start && a.size === b.size;
  const ops: PartitionOp[] = [];
  const keep = new Set<number>();
  for (const k of [...kernel].sort((a, b) => a.number - b.number)) {
    if (same(k, want.get(k.number))) keep.add(k.number);
    else ops.push({ op: "delete", number: k.number });
  }
  for (const w of [...want.values()].sort((a, b) => a.number - b.number)) {
    if (!keep.has(w.number)) ops.push({ op: "add", ...w });
  }
  return ops;
}
