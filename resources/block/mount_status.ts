/**
 * MountStatus: whether a machined volume is mounted where it belongs. The
 * STATE one is the signal that config and PKI can be persisted:
 * {@link isStateMounted}.
 */
import type { ResourceDescriptor } from "../descriptor.ts";
import type { VolumeError, VolumePhase } from "./volume_status.ts";
import type { VolumeName } from "./volume_spec.ts";

/** Type name. */
export const MOUNT_STATUS = "MountStatus";
/** Id of the MountStatus of STATE (mounted at /system/state). */
export const STATE_MOUNT_ID = "STATE";

/** One mount; the id is the {@link VolumeName} it mounts. */
export interface MountStatusSpec {
  readonly volume: VolumeName;
  /** `waiting`, `mounting`, `ready` or `failed`. */
  readonly phase: VolumePhase;
  readonly mounted: boolean;
  /** Partition device node. */
  readonly source: string;
  readonly target: string;
  readonly filesystem: string;
  readonly flags: readonly string[];
  readonly message: string;
  readonly error: VolumeError | null;
}

/**
 * The `stateMounted` signal: true when `spec` is the STATE mount and it is
 * mounted, so config and PKI written under its target persist.
 */
export function isStateMounted(spec: MountStatusSpec | undefined): boolean {
  return spec?.volume === "STATE" && spec.mounted && spec.phase === "ready";
}

export const mountStatusDescriptor: ResourceDescriptor<typeof MOUNT_STATUS, MountStatusSpec> = {
  type: MOUNT_STATUS,
  namespace: "block",
  aliases: ["mountstatus", "mountstatuses", "mounts"],
  description: "Mounts of the STATE and EPHEMERAL volumes",
  columns: [
    { header: "PHASE", value: (s) => s.phase },
    { header: "SOURCE", value: (s) => s.source },
    { header: "TARGET", value: (s) => s.target },
    { header: "FS", value: (s) => s.filesystem },
    { header: "MESSAGE", value: (s) => s.error?.message ?? s.message },
  ],
};
