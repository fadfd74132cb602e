/**
 * DiskDiscoveryController: publishes every block device in sysfs as a
 * DiskStatus and each of its partitions (GPT entries and the kernel's own
 * partitions) or whole-disk filesystem as a DiscoveredVolume. Rescans every
 * `resyncInterval` (hotplug) and whenever a VolumeStatus changes (after the
 * provisioner wrote a table). Disks that vanish are collected by the runtime.
 * Inputs: VolumeStatus (weak). Outputs: DiskStatus, DiscoveredVolume.
 * @module
 */
import type { BlockBackend } from "../../platform/block/mod.ts";
import type { MountBackend } from "../../platform/mount/mod.ts";
import { DISCOVERED_VOLUME, DISK_STATUS, VOLUME_STATUS } from "../../resources/mod.ts";
import type {
  DiscoveredVolumeSpec,
  DiskStatusSpec,
  MachineController,
  ResourceSpecs,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { classifyDisk } from "./decide_provisioning.ts";
import { partitionPath } from "./device_path.ts";
import { type DiskFacts, gatherDiskFacts } from "./disk_facts.ts";
import { DEFAULT_LAYOUT, partitionRole } from "../../layout/mod.ts";
import { readSysfsDisks, type SysfsDisk } from "./sysfs_disks.ts";

/** The namespace of every block resource. */
export const BLOCK_NAMESPACE = "block";

/** Dependencies of {@link DiskDiscoveryController}. */
export interface DiskDiscoveryDeps {
  backend: BlockBackend;
  mounts: MountBackend;
  /** @default "/sys" */
  sysfsRoot?: string;
  /** Where device nodes live. @default "/dev" */
  devRoot?: string;
  /** Rescan period (ms). @default 10000 */
  resyncInterval?: number;
}

/** Discovers disks and volumes. */
export class DiskDiscoveryController implements MachineController {
  readonly name = "block.DiskDiscoveryController";
  readonly inputs = [{ type: VOLUME_STATUS, kind: "weak" }] as const;
  readonly outputs = [
    { type: DISK_STATUS, kind: "exclusive" },
    { type: DISCOVERED_VOLUME, kind: "exclusive" },
  ] as const;
  readonly resyncInterval: number;
  readonly #deps: DiskDiscoveryDeps;

  constructor(deps: DiskDiscoveryDeps) {
    this.#deps = deps;
    this.resyncInterval = deps.resyncInterval ?? 10_000;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const mountedSources = new Set((await this.#deps.mounts.mounts()).map((m) => m.source));
    const devRoot = this.#deps.devRoot ?? "/dev";
    for (const disk of await readSysfsDisks(this.#deps.sysfsRoot ?? "/sys")) {
      const path = `${devRoot}/${disk.name}`;
      let facts: DiskFacts | undefined;
      let error = "";
      if (disk.size === 0) error = "no medium";
      else {
        try {
          facts = await gatherDiskFacts(this.#deps.backend, path, {
            mountedSources,
            zeroBytes: DEFAULT_LAYOUT.zeroBytes,
          });
        } catch (e) {
          error = (e as { code?: string }).code ?? (e instanceof Error ? e.message : String(e));
        }
      }
      await ctx.apply(
        { type: DISK_STATUS, namespace: BLOCK_NAMESPACE, id: disk.name },
        diskStatus(disk, path, facts, error),
      );
      for (const [id, spec] of await this.#volumes(disk, path, facts)) {
        await ctx.apply({ type: DISCOVERED_VOLUME, namespace: BLOCK_NAMESPACE, id }, spec);
      }
    }
  }

  async #volumes(
    disk: SysfsDisk,
    path: string,
    facts: DiskFacts | undefined,
  ): Promise<Map<string, DiscoveredVolumeSpec>> {
    const out = new Map<string, DiscoveredVolumeSpec>();
    if (!facts) return out;
    const kernel = new Map(disk.partitions.map((p) => [p.number, p]));
    const base = { disk: disk.name, filesystemLabel: "", filesystemUuid: "", filesystem: "" };
    for (const p of facts.gpt?.partitions ?? []) {
      const node = kernel.get(p.number)?.name ?? nodeName(partitionPath(path, p.number));
      out.set(node, {
        ...base,
        devicePath: partitionPath(path, p.number),
        partitionNumber: p.number,
        offset: p.firstLba * facts.sectorSize,
        size: (p.lastLba - p.firstLba + 1) * facts.sectorSize,
        partitionType: p.type,
        partitionUuid: p.uuid,
        partitionLabel: p.name,
        role: partitionRole(p),
        ...fsFields(p.fs),
        inKernel: kernel.has(p.number),
      });
    }
    // Partitions only the kernel knows (an MBR, or a GPT it parsed and we could not).
    for (const k of disk.partitions) {
      if (facts.gpt?.partitions.some((p) => p.number === k.number)) continue;
      const fs = await this.#deps.backend.probe(path, k.start).catch(() => undefined);
      out.set(k.name, {
        ...base,
        devicePath: partitionPath(path, k.number),
        partitionNumber: k.number,
        offset: k.start,
        size: k.size,
        partitionType: "",
        partitionUuid: "",
        partitionLabel: "",
        role: "other",
        ...fsFields(fs),
        inKernel: true,
      });
    }
    if (out.size === 0 && facts.wholeDiskFs) {
      out.set(disk.name, {
        ...base,
        devicePath: path,
        partitionNumber: 0,
        offset: 0,
        size: facts.size,
        partitionType: "",
        partitionUuid: "",
        partitionLabel: "",
        role: "other",
        ...fsFields(facts.wholeDiskFs),
        inKernel: true,
      });
    }
    return out;
  }
}

function nodeName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function fsFields(fs: { type: string; label: string; uuid: string } | undefined) {
  return {
    filesystem: fs?.type ?? "",
    filesystemLabel: fs?.label ?? "",
    filesystemUuid: fs?.uuid ?? "",
  };
}

/** The DiskStatus of one disk. Pure. */
export function diskStatus(
  disk: SysfsDisk,
  path: string,
  facts: DiskFacts | undefined,
  error: string,
): DiskStatusSpec {
  return {
    devicePath: path,
    dev: disk.dev,
    size: disk.size,
    logicalSectorSize: disk.logicalSectorSize,
    physicalSectorSize: disk.physicalSectorSize,
    model: disk.model,
    serial: disk.serial,
    wwid: disk.wwid,
    rotational: disk.rotational,
    readOnly: disk.readOnly || (facts?.readOnly ?? false),
    removable: disk.removable,
    kind: disk.kind,
    backingFile: disk.backingFile,
    partitionTable: !facts ? "unknown" : facts.gpt ? "gpt" : facts.mbrPartitions ? "mbr" : "none",
    diskGuid: facts?.gpt?.diskGuid ?? "",
    partitions: Math.max(facts?.gpt?.partitions.length ?? 0, disk.partitions.length),
    layout: classifyDisk(facts),
    error,
  };
}
