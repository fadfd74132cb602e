/**
 * Test support for reset: the installed disk the reset tests wipe (EFI,
 * STATE and EPHEMERAL on a 32 MiB /dev/vda in a FakeBlockBackend) and the
 * ProvisioningRecord the block controllers would have written for it. Shared
 * by reset and machinectl's reset tests so both wipe the same disk.
 * Not for production.
 */
import { FakeBlockBackend, type GptPartition } from "../platform/block/mod.ts";
import type { MachineStore } from "../resources/mod.ts";
import { part } from "../controllers/block/testing.ts";
import { PARTITION_NAME as N, PARTITION_TYPE as T } from "../layout/mod.ts";

const MiB = 1024 * 1024;
/** The test disk's GUID. */
export const DISK_GUID = "11111111-2222-4333-8444-555555555555";
/** The test disk's partitions: EFI (8 MiB), STATE (4 MiB), EPHEMERAL (8 MiB). */
export const esp = part(1, T.EFI_SYSTEM, N.EFI, 1, 8);
export const state = part(2, T.STATE, N.STATE, 9, 4);
export const eph = part(3, T.EPHEMERAL, N.EPHEMERAL, 13, 8);

/** A fake block backend with /dev/vda (32 MiB) holding esp, state and eph. */
export async function installedDisk(): Promise<FakeBlockBackend> {
  const block = new FakeBlockBackend();
  block.addDisk("/dev/vda", 32 * MiB);
  await block.writeGpt("/dev/vda", { diskGuid: DISK_GUID, partitions: [esp, state, eph] });
  return block;
}

/** The install's ProvisioningRecord in `store`, naming `recorded` as the partitions it made. */
export function recordInstall(store: MachineStore, recorded: GptPartition[]): void {
  store.create({
    type: "ProvisioningRecord",
    namespace: "block",
    id: "install",
    owner: "test",
    spec: {
      version: 1,
      disk: "/dev/vda",
      diskGuid: DISK_GUID,
      updatedAt: 0,
      path: "/system/state/provisioned.json",
      partitions: recorded.map(({ number, uuid, type, name, firstLba, lastLba }) => ({
        number,
        uuid,
        type,
        name,
        firstLba,
        lastLba,
      })),
    },
  });
}
