/**
 * VolumeConfigController: turns `machine.install` into the two VolumeSpecs,
 * STATE and EPHEMERAL, on the install disk. Without `machine.install` there
 * are none (and the runtime collects any earlier ones). Input: MachineConfig.
 * Output: VolumeSpec.
 * @module
 */
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  VOLUME_SPEC,
  type VolumeEncryptionSpec,
  type VolumeFilesystem,
  type VolumeSpecSpec,
} from "../../resources/mod.ts";
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { InstallConfig, VolumeEncryptionConfig } from "../../config/mod.ts";
import { BLOCK_NAMESPACE } from "./disk_discovery.ts";
import { DEFAULT_LAYOUT, MOUNT_POINT, PARTITION_NAME, PARTITION_TYPE } from "../../layout/mod.ts";

/** Dependencies of {@link VolumeConfigController}: what the config does not (yet) say. */
export interface VolumeConfigDeps {
  /** @default 100 MiB */
  stateSize?: number;
  /**
   * EPHEMERAL's filesystem. STATE is always ext4: it is small (100 MiB) and
   * mkfs.xfs refuses filesystems under 300 MB. @default "ext4"
   */
  ephemeralFilesystem?: VolumeFilesystem;
  /** @default "/system/state" */
  stateMountPoint?: string;
  /** @default "/var" */
  ephemeralMountPoint?: string;
}

/** Derives VolumeSpecs from the machine config. */
export class VolumeConfigController implements MachineController {
  readonly name = "block.VolumeConfigController";
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
  ] as const;
  readonly outputs = [{ type: VOLUME_SPEC, kind: "exclusive" }] as const;
  readonly #deps: VolumeConfigDeps;

  constructor(deps: VolumeConfigDeps = {}) {
    this.#deps = deps;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const install = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config.machine
      .install;
    for (const spec of volumeSpecs(install, this.#deps)) {
      await ctx.apply({ type: VOLUME_SPEC, namespace: BLOCK_NAMESPACE, id: spec.volume }, spec);
    }
  }
}

/** The VolumeSpecs for `install` (none without it). Pure. */
export function volumeSpecs(
  install: InstallConfig | undefined,
  deps: VolumeConfigDeps = {},
): VolumeSpecSpec[] {
  if (!install) return [];
  const common = { disk: install.disk, wipe: install.wipe, system: install.system };
  return [
    {
      ...common,
      volume: "STATE",
      filesystem: "ext4",
      partitionName: PARTITION_NAME.STATE,
      partitionType: PARTITION_TYPE.STATE,
      size: deps.stateSize ?? DEFAULT_LAYOUT.stateSize,
      mountPoint: deps.stateMountPoint ?? MOUNT_POINT.STATE,
      mountFlags: ["nosuid", "nodev", "noexec"],
      ...encryptionOf(install.encryption?.state),
    },
    {
      ...common,
      volume: "EPHEMERAL",
      filesystem: deps.ephemeralFilesystem ?? "ext4",
      partitionName: PARTITION_NAME.EPHEMERAL,
      partitionType: PARTITION_TYPE.EPHEMERAL,
      size: 0,
      mountPoint: deps.ephemeralMountPoint ?? MOUNT_POINT.EPHEMERAL,
      mountFlags: ["nosuid", "nodev"],
      ...encryptionOf(install.encryption?.ephemeral),
    },
  ];
}

/** The spec's `encryption`, without key material; nothing for a plain volume. */
function encryptionOf(
  c: VolumeEncryptionConfig | undefined,
): { encryption?: VolumeEncryptionSpec } {
  if (!c) return {};
  return {
    encryption: {
      cipher: c.cipher,
      sectorSize: c.sector_size,
      allowDiscards: c.allow_discards,
      keys: c.keys.map(({ slot, kind }) => ({ slot, kind })),
    },
  };
}
