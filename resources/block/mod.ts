/**
 * Block resource types (namespace `block`): disks and volumes discovered from
 * sysfs and the disks themselves, the STATE/EPHEMERAL volume specs derived
 * from the config, their provisioning and mount statuses, and the record of
 * what machined created.
 *
 * @example
 * ```ts
 * import { isStateMounted, type MountStatusSpec } from "./resources/block/mod.ts";
 * const ready = (s: MountStatusSpec) => isStateMounted(s);
 * console.log(ready);
 * ```
 * @module
 */
export * from "./disk_status.ts";
export * from "./discovered_volume.ts";
export * from "./volume_spec.ts";
export * from "./volume_status.ts";
export * from "./mount_status.ts";
export * from "./provisioning_record.ts";
