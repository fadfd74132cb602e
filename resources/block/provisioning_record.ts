/**
 * ProvisioningRecord: which partitions machined created on the install disk,
 * by unique partition GUID, as stored in `provisioned.json` on STATE. A reset
 * may only ever format partitions listed here that still match the disk.
 */
import type { ResourceDescriptor } from "../descriptor.ts";
import type { CreatedPartition } from "./volume_status.ts";

/** Type name. */
export const PROVISIONING_RECORD = "ProvisioningRecord";
/** The single record's id. */
export const PROVISIONING_RECORD_ID = "install";

/** The record; the same shape is written to STATE as JSON. */
export interface ProvisioningRecordSpec {
  /** Format version of the file. */
  readonly version: 1;
  /** The install disk's device node when the partitions were created. */
  readonly disk: string;
  /** GPT disk GUID the partitions belong to. */
  readonly diskGuid: string;
  /** Epoch ms of the latest change to the record. */
  readonly updatedAt: number;
  readonly partitions: readonly CreatedPartition[];
  /** Where the record file lives. */
  readonly path: string;
}

export const provisioningRecordDescriptor: ResourceDescriptor<
  typeof PROVISIONING_RECORD,
  ProvisioningRecordSpec
> = {
  type: PROVISIONING_RECORD,
  namespace: "block",
  aliases: ["provisioningrecord", "provisioningrecords", "provisioned"],
  description: "Partitions machined created, as recorded on STATE (what a reset may format)",
  columns: [
    { header: "DISK", value: (s) => s.disk },
    { header: "DISKGUID", value: (s) => s.diskGuid },
    { header: "PARTITIONS", value: (s) => s.partitions.map((p) => p.name).join(",") },
    { header: "PATH", value: (s) => s.path },
  ],
};
