/**
 * ProvisioningRecordController: once STATE is mounted, records on it which
 * partitions this boot created (from the VolumeStatuses) in
 * `provisioned.json`, and publishes the file's content as the
 * ProvisioningRecord resource, so a later reset can only ever format those.
 * Inputs: VolumeStatus, MountStatus. Output: ProvisioningRecord.
 * @module
 */
import {
  isStateMounted,
  MOUNT_STATUS,
  PROVISIONING_RECORD,
  PROVISIONING_RECORD_ID,
  STATE_MOUNT_ID,
  VOLUME_STATUS,
} from "../../resources/mod.ts";
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import { deepEqual, type ReconcileContext } from "../../runtime/mod.ts";
import { BLOCK_NAMESPACE } from "./disk_discovery.ts";
import { PROVISIONING_RECORD_FILE } from "../../layout/mod.ts";
import { type CreatedOnDisk, mergeRecord, readRecordFile, writeRecordFile } from "./record_file.ts";

/** Keeps the provisioning record on STATE. */
export class ProvisioningRecordController implements MachineController {
  readonly name = "block.ProvisioningRecordController";
  readonly inputs = [
    { type: VOLUME_STATUS, kind: "weak" },
    { type: MOUNT_STATUS, kind: "weak", id: STATE_MOUNT_ID },
  ] as const;
  readonly outputs = [{ type: PROVISIONING_RECORD, kind: "exclusive" }] as const;

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const mount = ctx.find(MOUNT_STATUS, BLOCK_NAMESPACE, STATE_MOUNT_ID)?.spec;
    if (!isStateMounted(mount)) return;
    const path = `${mount!.target}/${PROVISIONING_RECORD_FILE}`;
    const existing = await readRecordFile(path);
    const record = mergeRecord(existing, createdThisBoot(ctx), ctx.clock.now());
    if (!record) return;
    if (!deepEqual(record, existing)) {
      await writeRecordFile(path, record);
      ctx.log("recorded provisioned partitions", { path, diskGuid: record.diskGuid });
    }
    await ctx.apply(
      { type: PROVISIONING_RECORD, namespace: BLOCK_NAMESPACE, id: PROVISIONING_RECORD_ID },
      { ...record, path },
    );
  }
}

/** What the VolumeStatuses say this boot created. */
function createdThisBoot(ctx: ReconcileContext<ResourceSpecs>): CreatedOnDisk | undefined {
  const statuses = ctx.list(VOLUME_STATUS, { namespace: BLOCK_NAMESPACE })
    .map((r) => r.spec)
    .filter((s) => s.created !== null && s.diskGuid !== "");
  if (statuses.length === 0) return undefined;
  return {
    disk: statuses[0].disk,
    diskGuid: statuses[0].diskGuid,
    partitions: statuses.filter((s) => s.diskGuid === statuses[0].diskGuid).map((s) => s.created!),
  };
}
