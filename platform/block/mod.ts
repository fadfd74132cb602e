/**
 * The block platform surface: the {@link BlockBackend} interface with its
 * native implementation (ioctls + file I/O) and its Uint8Array-backed fake,
 * plus the pure GPT codec and superblock probe, usable on images without any
 * syscall (the imager uses them directly).
 *
 * @example
 * ```ts
 * import { FakeBlockBackend, GPT_TYPE, randomGuid } from "./platform/block/mod.ts";
 * const disks = new FakeBlockBackend();
 * disks.addDisk("/dev/vda", 64 << 20);
 * await disks.writeGpt("/dev/vda", { diskGuid: randomGuid(), partitions: [{
 *   number: 1, type: GPT_TYPE.LINUX_FILESYSTEM, uuid: randomGuid(),
 *   firstLba: 2048, lastLba: 4095, name: "STATE", attributes: 0n }] });
 * await disks.rereadPartitions("/dev/vda");
 * ```
 * @module
 */
export * from "./backend.ts";
export { NativeBlockBackend } from "./backend_native.ts";
export { FakeBlockBackend } from "./backend_fake.ts";
export * from "./gpt.ts";
export * from "./hybrid_mbr.ts";
export { crc32 } from "./crc32.ts";
export { type FsInfo, PROBE_BYTES, probeSuperblock } from "./probe.ts";
export { type PartitionOp, planPartitionSync } from "./partition_sync.ts";
export { ReadOnlyBlockBackend } from "./backend_readonly.ts";
