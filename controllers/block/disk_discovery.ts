/**
 * DiskDiscoveryController: publishes every block device in sysfs as a
 * DiskStatus and each of its partitions (GPT entries and the kernel's own
 * partitions) or whole-disk filesystem as a DiscoveredVolume. With a uevent
 * backend, a block uevent re-reads only the disk it names, at once; a full
 * rescan runs after a lost event, whenever a VolumeStatus changes (after the
 * provisioner wrote a table) and every `resyncInterval` as a safety net.
 * Without uevents (or once their stream failed) it rescans every 10 s.
 * Disks that vanish are collected by the runtime.
 * Inputs: VolumeStatus (weak). Outputs: DiskStatus, DiscoveredVolume.
 * @module
 */
import type { BlockBackend } from "../../platform/block/mod.ts";
import type { MountBackend } from "../../platform/mount/mod.ts";
import type { UeventBackend } from "../../platform/uevent/mod.ts";
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
import { DiskEventWatch } from "./disk_events.ts";
import { DEFAULT_LAYOUT, partitionRole } from "../../layout/mod.ts";
import { readSysfsDisk, readSysfsDisks, type SysfsDisk } from "./sysfs_disks.ts";

/** The namespace of every block resource. */
export const BLOCK_NAMESPACE = "block";

/** The safety-net rescan period while uevents are received (ms). */
export const UEVENT_RESCAN_MS = 60_000;
/** The rescan period without uevents (ms): hotplug is then noticed by rescanning. */
export const POLL_RESCAN_MS = 10_000;

/** Dependencies of {@link DiskDiscoveryController}. */
export interface DiskDiscoveryDeps {
  backend: BlockBackend;
  mounts: MountBackend;
  /** Kernel uevents: hotplug at once instead of at the next rescan. */
  uevents?: UeventBackend;
  /** @default "/sys" */
  sysfsRoot?: string;
  /** Where device nodes live. @default "/dev" */
  devRoot?: string;
  /**
   * Full rescan period (ms); without live uevents it is at most {@link POLL_RESCAN_MS}.
   * @default UEVENT_RESCAN_MS with uevents, POLL_RESCAN_MS without
   */
  resyncInterval?: number;
  /**
   * Called once, when the first full scan has published every disk sysfs listed and all
   * their volumes: a volume not in the store by then was on no disk the kernel knew.
   */
  onFirstScan?: () => void;
}

/** Discovers disks and volumes. */
export class DiskDiscoveryController implements MachineController {
  readonly name = "block.DiskDiscoveryController";
  readonly inputs = [{ type: VOLUME_STATUS, kind: "weak" }] as const;
  readonly outputs = [
    { type: DISK_STATUS, kind: "exclusive" },
    { type: DISCOVERED_VOLUME, kind: "exclusive" },
  ] as const;
  readonly #deps: DiskDiscoveryDeps;
  /** Until the first full scan is in; then called and dropped. */
  #onFirstScan: (() => void) | undefined;
  readonly #period: number;
  readonly #events: DiskEventWatch | undefined;
  #lastFull = Number.NEGATIVE_INFINITY;
  #volumesSeen = "";

  constructor(deps: DiskDiscoveryDeps) {
    this.#deps = deps;
    this.#onFirstScan = deps.onFirstScan;
    this.#period = deps.resyncInterval ?? (deps.uevents ? UEVENT_RESCAN_MS : POLL_RESCAN_MS);
    this.#events = deps.uevents ? new DiskEventWatch(deps.uevents) : undefined;
  }

  /** Read by the runtime before each wait: slow while uevents flow, fast without. */
  get resyncInterval(): number {
    return this.#events?.live ? this.#period : Math.min(this.#period, POLL_RESCAN_MS);
  }

  /** Receives block uevents (when a backend was given) and wakes a reconcile per batch. */
  async watch(wake: () => void, signal: AbortSignal): Promise<void> {
    await this.#events?.run(wake, signal);
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const now = ctx.clock.now();
    const work = this.#events?.take() ?? { full: true };
    const volumes = ctx.list(VOLUME_STATUS).map((r) => `${r.metadata.id}@${r.metadata.version}`)
      .join(",");
    const mountedSources = new Set((await this.#deps.mounts.mounts()).map((m) => m.source));
    const root = this.#deps.sysfsRoot ?? "/sys";
    if (work.full || volumes !== this.#volumesSeen || now - this.#lastFull >= this.#period) {
      this.#lastFull = now;
      this.#volumesSeen = volumes;
      for (const disk of await readSysfsDisks(root)) {
        await this.#publish(ctx, disk, mountedSources);
      }
      this.#onFirstScan?.();
      this.#onFirstScan = undefined;
      return;
    }
    // Only the named disks: keep every other output; what a named disk no longer has is collected.
    const named = new Set(work.disks);
    for (const r of ctx.list(DISK_STATUS, { namespace: BLOCK_NAMESPACE })) {
      if (!named.has(r.metadata.id)) ctx.keep(r.metadata);
    }
    for (const r of ctx.list(DISCOVERED_VOLUME, { namespace: BLOCK_NAMESPACE })) {
      if (!named.has(r.spec.disk)) ctx.keep(r.metadata);
    }
    for (const name of named) {
      const disk = await readSysfsDisk(root, name);
      if (disk) await this.#publish(ctx, disk, mountedSources);
    }
  }

  /** Apply one disk's DiskStatus and its DiscoveredVolumes. */
  async #publish(
    ctx: ReconcileContext<ResourceSpecs>,
    disk: SysfsDisk,
    mountedSources: Set<string>,
  ): Promise<void> {
    const path = `${this.#deps.devRoot ?? "/dev"}/${disk.name}`;
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
