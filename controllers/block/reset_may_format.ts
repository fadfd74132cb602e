/**
 * What a reset may format: only partitions machined itself created, by the
 * record it kept on STATE, and only while they are still exactly what it
 * created. Boot partitions never qualify, whatever the record says.
 * @module
 */
import type { GptPartition, GptTable } from "../../platform/block/mod.ts";
import type { CreatedPartition } from "../../resources/mod.ts";
import { isBootPartition, partitionRole } from "../../layout/mod.ts";

/** The parts of a provisioning record this check reads. */
export interface RecordForReset {
  diskGuid: string;
  partitions: readonly CreatedPartition[];
}

/**
 * The partitions of `current` that a reset may format: each must be listed in
 * `record` with the same unique GUID, type, name, number and extent, be a
 * STATE or EPHEMERAL partition, and sit on the disk the record was made for.
 * Anything else (a missing record, another disk GUID, a boot partition, a
 * partition re-created or moved since) is left out. Pure.
 */
export function partitionsResetMayFormat(
  record: RecordForReset | undefined,
  current: GptTable | undefined,
): GptPartition[] {
  if (!record || !current || record.diskGuid !== current.diskGuid) return [];
  const recorded = new Map(record.partitions.map((p) => [p.uuid.toLowerCase(), p]));
  return current.partitions.filter((p) => {
    const r = recorded.get(p.uuid.toLowerCase());
    if (!r || isBootPartition(p) || isBootPartition(r)) return false;
    const role = partitionRole(p);
    if (role !== "state" && role !== "ephemeral") return false;
    return r.type === p.type && r.name === p.name && r.number === p.number &&
      r.firstLba === p.firstLba && r.lastLba === p.lastLba;
  });
}
