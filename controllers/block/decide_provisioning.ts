/**
 * The guarded provisioning decision, as a pure function of what is on the
 * install disk, machined's layout and `machine.install`:
 *
 * | disk holds                                   | wipe: false      | wipe: true          |
 * |----------------------------------------------|------------------|---------------------|
 * | nothing (missing)                            | refuse           | refuse              |
 * | anything, but read-only or mounted as a whole | refuse           | refuse              |
 * | our STATE + EPHEMERAL                        | leave            | leave               |
 * | ours, one or both holding a LUKS2 header     | leave (1)        | leave (1)           |
 * | only boot partitions (a flashed image)       | complete         | complete            |
 * | zeros, or an empty GPT                       | create           | create              |
 * | other partitions, an MBR, a filesystem, data | refuse           | wipe (boot kept)    |
 *
 * With `system` (`machine.install.system`: install writes the system on
 * the disk first), a disk without an ESP is `refuse`d with `awaiting-install`
 * whatever it holds: the installer's new table must come first, then this
 * appends STATE and EPHEMERAL to it (`complete`).
 *
 * Boot partitions (ESP, BIOS boot, A/B slots) are kept by every outcome and
 * never lie in a range the plan zeroes; partitions in use are never removed.
 * @module
 */
import { gptGeometry, type GptPartition, type GptTable } from "../../platform/block/mod.ts";
import type { DiskFacts, PartitionFacts } from "./disk_facts.ts";
import type { DiskLayout } from "../../resources/mod.ts";
import {
  isBootPartition,
  PARTITION_NAME,
  PARTITION_TYPE,
  partitionRole,
  type VolumeLayout,
} from "../../layout/mod.ts";

/** `machine.install` as the decision needs it. */
export interface InstallRequest {
  disk: string;
  wipe: boolean;
  /** `machine.install.system`: wait for the installer's ESP. @default false */
  system?: boolean;
}

/** Why a disk was refused. (1) then each volume follows decide_encryption.ts. */
export type RefuseCode =
  | "missing"
  | "read-only"
  | "in-use"
  | "foreign-data"
  | "partial-layout"
  | "ambiguous-layout"
  | "unrecognized-data"
  | "no-space"
  | "awaiting-install";

/** A byte range on the disk. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** Our two partitions as the plan creates them. */
export interface CreatedVolumes {
  state: GptPartition;
  ephemeral: GptPartition;
}

/** Write a new table: append to a flashed image, create on a blank disk, or wipe. */
export interface ProvisioningPlan {
  action: "complete" | "create" | "wipe";
  reason: string;
  /** The whole table to write (kept partitions unchanged, plus ours). */
  table: GptTable;
  created: CreatedVolumes;
  /** Boot partitions carried over untouched. */
  kept: GptPartition[];
  /** Partitions the table drops (only with `wipe`). */
  removed: GptPartition[];
  /** Zeroed before the table is written; never overlaps a kept partition. */
  zero: ByteRange[];
}

/** The outcome of {@link decideProvisioning}. */
export type ProvisioningDecision =
  | {
    action: "leave";
    reason: string;
    state: PartitionFacts;
    ephemeral: PartitionFacts;
    /** Ours but never formatted (blank): a provisioning run was interrupted. */
    format: PartitionFacts[];
  }
  | ProvisioningPlan
  | { action: "refuse"; code: RefuseCode; reason: string };

/** Options of {@link decideProvisioning}. */
export interface DecideOptions {
  /** Source of new unique partition GUIDs (tests pass a deterministic one). */
  newGuid?: () => string;
}

const MOUNTABLE = new Set(["ext4", "xfs"]);

/** Decide what to do with the install disk. Pure: reads only its arguments. */
export function decideProvisioning(
  facts: DiskFacts | undefined,
  layout: VolumeLayout,
  install: InstallRequest,
  options: DecideOptions = {},
): ProvisioningDecision {
  const newGuid = options.newGuid ?? (() => crypto.randomUUID());
  const refuse = (code: RefuseCode, reason: string) => ({
    action: "refuse" as const,
    code,
    reason,
  });
  if (!facts) return refuse("missing", `Install disk "${install.disk}" does not exist`);
  const disk = facts.path;
  if (facts.readOnly) return refuse("read-only", `Install disk "${disk}" is read-only`);
  if (facts.mounted) return refuse("in-use", `Install disk "${disk}" is mounted as a whole`);

  const parts = facts.gpt?.partitions ?? [];
  if (install.system && !parts.some((p) => partitionRole(p) === "efi")) {
    return refuse(
      "awaiting-install",
      `Waiting for the system to be installed on "${disk}" (machine.install.system)`,
    );
  }
  const states = parts.filter((p) => partitionRole(p) === "state");
  const ephemerals = parts.filter((p) => partitionRole(p) === "ephemeral");
  if (states.length > 1 || ephemerals.length > 1) {
    return refuse(
      "ambiguous-layout",
      `Install disk "${disk}" has more than one STATE or EPHEMERAL`,
    );
  }
  const [state, ephemeral] = [states[0], ephemerals[0]];
  if (state && ephemeral) return decideExisting(disk, state, ephemeral);

  const boot = parts.filter(isBootPartition);
  const others = parts.filter((p) => !isBootPartition(p));
  const plan = (action: ProvisioningPlan["action"], reason: string, removed: PartitionFacts[]) =>
    planTable(action, reason, facts, boot, removed, layout, newGuid) ?? refuse(
      "no-space",
      `Install disk "${disk}" has no free extent for STATE (${layout.stateSize} bytes) and ` +
        `EPHEMERAL (at least ${layout.minEphemeralSize} bytes)`,
    );

  if (facts.gpt && others.length === 0) {
    if (boot.length > 0) {
      return plan(
        "complete",
        `"${disk}" holds only boot partitions (${names(boot)}): appending STATE and EPHEMERAL`,
        [],
      );
    }
    return plan("create", `"${disk}" has an empty partition table`, []);
  }
  if (!facts.gpt && facts.blank && !facts.mbrPartitions && !facts.wholeDiskFs) {
    return plan("create", `"${disk}" is blank`, []);
  }

  const what = describeData(facts, others, state ?? ephemeral);
  if (!install.wipe) {
    return refuse(
      state || ephemeral ? "partial-layout" : "foreign-data",
      `Install disk "${disk}" holds ${what}; set machine.install.wipe to use it`,
    );
  }
  const busy = others.filter((p) => p.mounted);
  if (busy.length > 0) {
    return refuse("in-use", `Cannot wipe "${disk}": ${names(busy)} mounted`);
  }
  const kept = boot.length > 0 ? `, keeping boot partitions ${names(boot)}` : "";
  return plan("wipe", `Wiping ${what} on "${disk}" (machine.install.wipe)${kept}`, others);
}

/** Both machined partitions exist: keep them, format what is blank, or refuse. */
function decideExisting(
  disk: string,
  state: PartitionFacts,
  ephemeral: PartitionFacts,
): ProvisioningDecision {
  return leave(disk, state, ephemeral) ?? {
    action: "refuse",
    code: "unrecognized-data",
    reason: `A machined partition on "${disk}" holds data that is not an ext4 or xfs filesystem`,
  };
}

function leave(disk: string, state: PartitionFacts, ephemeral: PartitionFacts) {
  const format: PartitionFacts[] = [];
  for (const p of [state, ephemeral]) {
    // A LUKS2 header is kept: controllers/block/decide_encryption.ts decides what opens it.
    if (p.fs && (MOUNTABLE.has(p.fs.type) || p.fs.type === "crypto_LUKS")) continue;
    if (p.fs || !p.blank) return undefined;
    format.push(p);
  }
  const reason = format.length === 0
    ? `"${disk}" already has machined's layout`
    : `"${disk}" has machined's layout; ${names(format)} never formatted`;
  return { action: "leave" as const, reason, state, ephemeral, format };
}

function describeData(facts: DiskFacts, others: PartitionFacts[], ours?: PartitionFacts): string {
  if (ours) return `only part of machined's layout (${ours.name})`;
  if (others.length > 0) return `partitions ${names(others)}`;
  if (facts.mbrPartitions) return "an MBR partition table";
  if (facts.wholeDiskFs) return `a whole-disk ${facts.wholeDiskFs.type} filesystem`;
  return "data that is not zero";
}

function names(parts: readonly GptPartition[]): string {
  return parts.map((p) => `${p.number}${p.name ? ` (${p.name})` : ""}`).join(", ");
}

/** Lay out STATE then EPHEMERAL in the largest free extent around the kept partitions. */
function planTable(
  action: ProvisioningPlan["action"],
  reason: string,
  facts: DiskFacts,
  kept: PartitionFacts[],
  removed: PartitionFacts[],
  layout: VolumeLayout,
  newGuid: () => string,
): ProvisioningPlan | undefined {
  const s = facts.sectorSize;
  const g = gptGeometry(facts.size, s);
  const align = Math.max(1, Math.floor(layout.alignment / s));
  const up = (lba: number) => Math.ceil(lba / align) * align;
  const sorted = [...kept].sort((a, b) => a.firstLba - b.firstLba);
  let best: { first: number; last: number } | undefined;
  let cursor = g.firstUsableLba;
  for (const gap of [...sorted, undefined]) {
    const first = up(cursor);
    const last = gap ? gap.firstLba - 1 : g.lastUsableLba;
    if (last >= first && (!best || last - first > best.last - best.first)) best = { first, last };
    if (gap) cursor = Math.max(cursor, gap.lastLba + 1);
  }
  if (!best) return undefined;
  const stateSectors = Math.ceil(layout.stateSize / s);
  const ephFirst = up(best.first + stateSectors);
  // EPHEMERAL ends on the alignment too: its size is then a multiple of any LUKS2 sector size
  // (4096 by default); the disk's own end (less the backup GPT) rarely is.
  const ephLast = ephFirst + Math.floor((best.last - ephFirst + 1) / align) * align - 1;
  if ((ephLast - ephFirst + 1) * s < layout.minEphemeralSize) return undefined;

  const used = new Set(kept.map((p) => p.number));
  const nextNumber = () => {
    let n = 1;
    while (used.has(n)) n++;
    used.add(n);
    return n;
  };
  const mk = (name: string, type: string, firstLba: number, lastLba: number): GptPartition => ({
    number: nextNumber(),
    type,
    uuid: newGuid(),
    firstLba,
    lastLba,
    name,
    attributes: 0n,
  });
  const created = {
    state: mk(
      PARTITION_NAME.STATE,
      PARTITION_TYPE.STATE,
      best.first,
      best.first + stateSectors - 1,
    ),
    ephemeral: mk(PARTITION_NAME.EPHEMERAL, PARTITION_TYPE.EPHEMERAL, ephFirst, ephLast),
  };
  const keptPlain = kept.map(toGpt);
  const table: GptTable = {
    diskGuid: facts.gpt?.diskGuid ?? newGuid(),
    partitions: [...keptPlain, created.state, created.ephemeral].sort((a, b) =>
      a.number - b.number
    ),
  };
  return {
    action,
    reason,
    table,
    created,
    kept: keptPlain,
    removed: removed.map(toGpt),
    zero: zeroRanges(facts, kept, removed, created, layout.zeroBytes, action === "wipe"),
  };
}

function toGpt(p: PartitionFacts | GptPartition): GptPartition {
  const { number, type, uuid, firstLba, lastLba, name, attributes } = p;
  return { number, type, uuid, firstLba, lastLba, name, attributes };
}

/**
 * Heads (and, when wiping, tails) to zero: the new partitions' heads so no
 * stale signature survives, and when wiping also the removed partitions' ends
 * and, with no boot partition kept, the disk's ends. Every range is clipped
 * against the kept partitions.
 */
function zeroRanges(
  facts: DiskFacts,
  kept: readonly GptPartition[],
  removed: readonly GptPartition[],
  created: CreatedVolumes,
  zeroBytes: number,
  wipe: boolean,
): ByteRange[] {
  const s = facts.sectorSize;
  const span = (p: GptPartition) => ({ offset: p.firstLba * s, end: (p.lastLba + 1) * s });
  const ends = (offset: number, end: number, tail: boolean): Array<[number, number]> => {
    const head: [number, number] = [offset, Math.min(end, offset + zeroBytes)];
    return tail ? [head, [Math.max(offset, end - zeroBytes), end]] : [head];
  };
  const want: Array<[number, number]> = [];
  for (const p of [created.state, created.ephemeral]) {
    const { offset, end } = span(p);
    want.push(...ends(offset, end, false));
  }
  if (wipe) {
    for (const p of removed) {
      const { offset, end } = span(p);
      want.push(...ends(offset, end, true));
    }
    // The disk's ends (stray signatures, boot code) only when no boot partition is kept,
    // so a kept boot chain is left exactly as it was.
    if (kept.length === 0) want.push(...ends(0, facts.size, true));
  }
  const out: ByteRange[] = [];
  for (const [from, to] of want) {
    for (const [a, b] of subtract(from, to, kept.map(span))) {
      if (b > a) out.push({ offset: a, length: b - a });
    }
  }
  return out;
}

/** The parts of [from, to) outside every span. */
function subtract(
  from: number,
  to: number,
  spans: ReadonlyArray<{ offset: number; end: number }>,
): Array<[number, number]> {
  let pieces: Array<[number, number]> = [[from, to]];
  for (const k of spans) {
    pieces = pieces.flatMap(([a, b]): Array<[number, number]> => {
      if (k.end <= a || k.offset >= b) return [[a, b]];
      return [[a, Math.min(b, k.offset)], [Math.max(a, k.end), b]].filter(([x, y]) =>
        y > x
      ) as Array<[number, number]>;
    });
  }
  return pieces;
}

/**
 * What a disk holds, as `machinectl get disks` shows it: the same reading
 * of the facts as {@link decideProvisioning}, without a plan.
 */
export function classifyDisk(facts: DiskFacts | undefined): DiskLayout {
  if (!facts) return "unknown";
  const parts = facts.gpt?.partitions ?? [];
  const role = (p: PartitionFacts) => partitionRole(p);
  if (parts.some((p) => role(p) === "state") && parts.some((p) => role(p) === "ephemeral")) {
    return "machined";
  }
  if (facts.gpt) {
    if (parts.length === 0) return "blank";
    return parts.every(isBootPartition) ? "image" : "foreign";
  }
  return facts.blank && !facts.mbrPartitions && !facts.wholeDiskFs ? "blank" : "foreign";
}
