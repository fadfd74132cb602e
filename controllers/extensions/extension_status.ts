/**
 * ExtensionStatusController: publishes one ExtensionStatus per system
 * extension of the booted slot, joining the root image's index (what the
 * signed image ships) with what machined-init did at boot (mounted, or
 * refused with the reason), and reports each refusal once as an event. It
 * changes nothing: machined-init verified and mounted before machined
 * started. Inputs: none (the files do not change while the node runs).
 * Outputs: ExtensionStatus.
 * @module
 */
import type { EventBus } from "../../events/mod.ts";
import {
  type ExtensionIndexEntry,
  type ExtensionOutcome,
  EXTENSIONS_INDEX,
  EXTENSIONS_MOUNTS,
  EXTENSIONS_OUTCOME,
  parseExtensionIndex,
  parseExtensionOutcome,
} from "../../layout/mod.ts";
import {
  EXTENSION_STATUS,
  type ExtensionStatusSpec,
  type MachineController,
  RESOURCE_DESCRIPTORS,
  type ResourceSpecs,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import { type ExtensionFiles, MAX_EXTENSION_FILE_BYTES } from "./extension_files.ts";

const NAME = "extensions.ExtensionStatusController";

/** What the controller needs. */
export interface ExtensionStatusDeps {
  files: ExtensionFiles;
  events?: EventBus;
  /** @default EXTENSIONS_INDEX */
  indexPath?: string;
  /** @default EXTENSIONS_OUTCOME */
  outcomePath?: string;
}

/** See the module doc. */
export class ExtensionStatusController implements MachineController {
  readonly name = NAME;
  readonly inputs = [] as const;
  readonly outputs = [{ type: EXTENSION_STATUS, kind: "exclusive" }] as const;
  readonly #reported = new Set<string>();

  constructor(private readonly deps: ExtensionStatusDeps) {}

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const { files } = this.deps;
    const index = await files.read(
      this.deps.indexPath ?? EXTENSIONS_INDEX,
      MAX_EXTENSION_FILE_BYTES,
    );
    const outcome = await files.read(
      this.deps.outcomePath ?? EXTENSIONS_OUTCOME,
      MAX_EXTENSION_FILE_BYTES,
    );
    const statuses = extensionStatuses(
      parseExtensionIndex(index ?? ""),
      outcome === undefined ? undefined : parseExtensionOutcome(outcome),
    );
    const namespace = RESOURCE_DESCRIPTORS[EXTENSION_STATUS].namespace;
    for (const s of statuses) {
      await ctx.apply({ type: EXTENSION_STATUS, namespace, id: s.name }, s);
      if (s.state === "refused" && !this.#reported.has(s.name)) {
        this.#reported.add(s.name);
        this.deps.events?.emit(
          "controller",
          NAME,
          "extension-refused",
          `System extension "${s.name}" ${s.version} was refused at boot and is not mounted: ${s.reason}`,
          { extension: s.name, version: s.version, sha256: s.sha256 },
        );
      }
    }
  }
}

/** Builds the controller. */
export function extensionStatusController(deps: ExtensionStatusDeps): ExtensionStatusController {
  return new ExtensionStatusController(deps);
}

/**
 * One status per index entry: mounted only when machined-init says so for
 * the same name and hash; refused with its reason (or the whole index's,
 * when it refused the index); unknown when it left no outcome at all (a
 * node not booted from a slot image). Pure.
 */
export function extensionStatuses(
  index: readonly ExtensionIndexEntry[],
  outcome: readonly ExtensionOutcome[] | undefined,
): ExtensionStatusSpec[] {
  const whole = outcome?.find((o) => o.name === "-" && o.state === "refused");
  return index.map((e) => {
    const base = {
      name: e.name,
      version: e.version,
      sha256: e.sha256,
      size: e.size,
      mountPoint: `${EXTENSIONS_MOUNTS}/${e.name}`,
    };
    if (outcome === undefined) {
      return {
        ...base,
        state: "unknown",
        reason: "machined-init left no outcome (not booted from a slot image)",
      };
    }
    if (whole) {
      return { ...base, state: "refused", reason: `the index was refused: ${whole.reason}` };
    }
    const o = outcome.find((x) => x.name === e.name);
    if (!o) return { ...base, state: "refused", reason: "machined-init did not mount it" };
    if (o.sha256 !== e.sha256) {
      return { ...base, state: "refused", reason: `machined-init saw sha256 ${o.sha256}` };
    }
    return o.state === "mounted"
      ? { ...base, state: "mounted", reason: "" }
      : { ...base, state: "refused", reason: o.reason };
  });
}
