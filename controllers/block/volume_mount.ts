/**
 * VolumeMountController: mounts each volume whose VolumeStatus is ready at
 * its spec's mount point, once, and reports it as a MountStatus (the STATE
 * one is the `stateMounted` signal). It never unmounts: a volume stays
 * mounted until shutdown even when the config stops asking for it.
 * Inputs: VolumeSpec, VolumeStatus. Output: MountStatus.
 * @module
 */
import type { EventBus } from "../../events/mod.ts";
import type { MountBackend, MountFlag, MountInfo } from "../../platform/mount/mod.ts";
import {
  MOUNT_STATUS,
  type MountStatusSpec,
  VOLUME_SPEC,
  VOLUME_STATUS,
  type VolumeSpecSpec,
  type VolumeStatusSpec,
} from "../../resources/mod.ts";
import type { MachineController, ResourceSpecs } from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { BLOCK_NAMESPACE } from "./disk_discovery.ts";
import { ProvisionError, toVolumeError } from "./provision_error.ts";

/** Dependencies of {@link VolumeMountController}. */
export interface VolumeMountDeps {
  mounts: MountBackend;
  /** Create a mount point and its parents. @default Deno.mkdir recursive */
  mkdir?: (path: string) => Promise<void>;
  events?: EventBus;
}

/** Mounts ready volumes. */
export class VolumeMountController implements MachineController {
  readonly name = "block.VolumeMountController";
  readonly inputs = [
    { type: VOLUME_SPEC, kind: "weak" },
    { type: VOLUME_STATUS, kind: "weak" },
  ] as const;
  readonly outputs = [{ type: MOUNT_STATUS, kind: "exclusive" }] as const;
  readonly #deps: VolumeMountDeps;

  constructor(deps: VolumeMountDeps) {
    this.#deps = deps;
  }

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const table = await this.#deps.mounts.mounts();
    const seen = new Set<string>();
    let failure: unknown;
    // STATE first: it holds the config and PKI the rest of boot waits for.
    const specs = ctx.list(VOLUME_SPEC).map((r) => r.spec)
      .sort((a, b) => (a.volume === "STATE" ? 0 : 1) - (b.volume === "STATE" ? 0 : 1));
    for (const spec of specs) {
      seen.add(spec.volume);
      const vs = ctx.find(VOLUME_STATUS, BLOCK_NAMESPACE, spec.volume)?.spec;
      try {
        await this.#sync(ctx, spec, vs, table);
      } catch (e) {
        failure ??= e;
      }
    }
    // Still mounted but no longer asked for: keep reporting it.
    for (const r of ctx.list(MOUNT_STATUS, { namespace: BLOCK_NAMESPACE })) {
      if (seen.has(r.metadata.id)) continue;
      if (mountedAt(table, r.spec.target)?.source === r.spec.source) ctx.keep(r.metadata);
    }
    if (failure) throw failure;
  }

  async #sync(
    ctx: ReconcileContext<ResourceSpecs>,
    spec: VolumeSpecSpec,
    vs: VolumeStatusSpec | undefined,
    table: MountInfo[],
  ): Promise<void> {
    const target = spec.mountPoint;
    // An encrypted volume's filesystem is on its dm-crypt mapping, never the partition.
    const source = vs?.mappingPath || vs?.partitionPath || "";
    const top = mountedAt(table, target);
    const status = (s: Partial<MountStatusSpec>) =>
      ctx.apply({ type: MOUNT_STATUS, namespace: BLOCK_NAMESPACE, id: spec.volume }, {
        volume: spec.volume,
        phase: "waiting",
        mounted: false,
        source,
        target,
        filesystem: vs?.filesystem ?? "",
        flags: spec.mountFlags,
        message: "",
        error: null,
        ...s,
      });
    if (source && top?.source === source) {
      await status({ phase: "ready", mounted: true, filesystem: top.fstype, message: "mounted" });
      return;
    }
    if (vs?.phase !== "ready") {
      await status({ message: `waiting for volume ${spec.volume} (${vs?.phase ?? "no status"})` });
      return;
    }
    if (top && !isBootPlaceholder(top)) {
      const error = {
        message: `Cannot mount ${spec.volume} at "${target}": "${top.source}" is mounted there`,
        code: "EBUSY",
        op: "mount",
      };
      await status({ phase: "failed", error });
      return;
    }
    await status({ phase: "mounting", message: `mounting ${source}` });
    try {
      await (this.#deps.mkdir ?? ((p) => Deno.mkdir(p, { recursive: true })))(target);
      await this.#deps.mounts.mount({
        source,
        target,
        fstype: vs.filesystem,
        flags: spec.mountFlags as MountFlag[],
      });
    } catch (e) {
      const err = new ProvisionError("mount", `${source} on ${target}`, { cause: e });
      await status({ phase: "failed", error: toVolumeError(err) });
      this.#deps.events?.emit("task", `mount ${target}`, "failed", err.message);
      throw err;
    }
    ctx.log("mounted", { source, target, fstype: vs.filesystem });
    this.#deps.events?.emit("task", `mount ${target}`, "done", `${source} (${vs.filesystem})`);
    await status({ phase: "ready", mounted: true, message: "mounted" });
  }
}

/** The visible mount at exactly `target`. */
function mountedAt(table: readonly MountInfo[], target: string): MountInfo | undefined {
  return table.findLast((m) => m.mountPoint === target);
}

/**
 * The tmpfs machined-init mounts on /var (the root image is read-only) until
 * EPHEMERAL mounts over it: the only mount a volume may cover. Pure.
 */
export function isBootPlaceholder(top: Pick<MountInfo, "source" | "fstype">): boolean {
  return top.fstype === "tmpfs" && top.source === "tmpfs";
}
