/**
 * The write plans of the A/B slots, as pure functions of what the ESP holds:
 * install a bundle into the slot that is not booted, bless the booted trial,
 * roll back to the other slot. Each plan is a list of file operations whose
 * order makes a power cut at any point leave a bootable ESP: the old slot's
 * entry is never touched, the bundle's files arrive as `*.new` beside the
 * target's and are synced and re-hashed from a fresh mount before anything
 * of the target changes (a bad read-back leaves its previous image and entry
 * whole), the target's entry is removed before its files are renamed into
 * place, and the new entry appears, by one rename, only after that.
 */
import { loaderEntry, ukiLoaderEntry } from "../layout/mod.ts";
import { installCmdline } from "./slot_cmdline.ts";
import type { KernelArgs } from "../config/mod.ts";
import { ukiFileOf } from "./uki_check.ts";
import {
  ENTRIES_DIR,
  type Entry,
  entryFileName,
  otherSlot,
  type Slot,
  slotState,
  TRIAL_TRIES,
  TRIAL_TRIES_MAX,
  TRIAL_TRIES_MIN,
} from "./entries.ts";
import { SlotError } from "../bundle/mod.ts";
import type { Manifest } from "../bundle/mod.ts";

/** What the ESP holds, as far as the plans care. */
export interface EspListing {
  entries: Entry[];
  /** File names in `/A` and `/B`. */
  slotFiles: Record<Slot, string[]>;
}

/** One file operation of a plan. */
export type PlanStep =
  | { op: "remove"; path: string }
  | { op: "receive"; file: string; path: string }
  | { op: "rename"; from: string; to: string }
  | { op: "syncDir"; dir: string }
  | { op: "verify"; path: string; size: number; sha256: string }
  | { op: "writeEntry"; path: string; text: string };

/**
 * An install as any boot mechanism plans it (this module for the ESP,
 * pi_slot_plan.ts for the Pi 3's config.txt): the steps before the bundle's
 * files, while receiving them, and after, in the order slot_writer.ts's
 * installBundle runs them.
 */
export interface InstallSteps {
  target: Slot;
  /** Leftovers of an interrupted install. */
  clean: PlanStep[];
  /** Receive each file as `*.new`. */
  receive: PlanStep[];
  /** Sync the received `*.new` files' directory before they are re-hashed. */
  settle: PlanStep[];
  /** Re-hash the `*.new` files from the medium (after a remount), before the commit. */
  verify: PlanStep[];
  /** Disarm, rename into place, sync (only after the verify). */
  commit: PlanStep[];
  /** The commit point. */
  arm: PlanStep[];
  /** What arming wrote, for the answer and the log (`machined-b+3.conf`, `trial.txt`). */
  armedAs: string;
  /**
   * Bundle files held in memory and checked before the ESP opens for writing
   * (a Secure Boot bundle's UKIs); one without a receive step is then dropped.
   */
  hold?: string[];
}

/** The ESP's install: the entry with tries appears at the arm, at `generation`. */
export interface InstallPlan extends InstallSteps {
  generation: number;
}

const tmpEntry = (slot: Slot) => `${ENTRIES_DIR}/machined-${slot.toLowerCase()}.tmp`;

/** The highest generation on the ESP. Pure. */
export function topGeneration(listing: EspListing): number {
  return Math.max(0, ...listing.entries.map((e) => e.generation));
}

/**
 * Plan installing `manifest` (a plain bundle: kernel, initramfs, root image)
 * into the slot that is not `booted`; the node writes the entry's command line,
 * with `args` (machine.kernel.args) applied.
 * @throws SlotError no-booted-slot when the booted slot is unknown (not an image boot).
 */
export function planInstall(
  listing: EspListing,
  booted: Slot | undefined,
  manifest: Manifest,
  args?: KernelArgs,
  tries = TRIAL_TRIES,
): InstallPlan {
  return planSlotInstall(listing, booted, {
    tries,
    entry: (target, generation) =>
      loaderEntry(target, installCmdline(manifest, target, args), {
        generation,
        version: manifest.version,
      }),
    files: () => manifest.files.map((f) => ({ ...f, file: f.name })),
  });
}

/**
 * Plan installing a Secure Boot bundle (`boot: "uki"`) into the slot that is
 * not `booted`: the target's signed UKI as `machined.efi` and the root image,
 * an entry that only names the UKI. Both UKIs are held and checked before the
 * write session (`hold`); the other slot's is then dropped.
 * @throws SlotError no-booted-slot when the booted slot is unknown.
 */
export function planUkiInstall(
  listing: EspListing,
  booted: Slot | undefined,
  manifest: Manifest,
  tries = TRIAL_TRIES,
): InstallPlan {
  return planSlotInstall(listing, booted, {
    tries,
    entry: (target, generation) =>
      ukiLoaderEntry(target, { generation, version: manifest.version }),
    files: (target) =>
      manifest.files.flatMap((f): SlotFile[] => {
        if (f.name === "root.img") return [{ ...f, file: f.name }];
        const mine = f.name === ukiFileOf(target);
        return mine ? [{ ...f, name: "machined.efi", file: f.name }] : [];
      }),
    hold: manifest.files.filter((f) => f.name.endsWith(".efi")).map((f) => f.name),
  });
}

/**
 * The tries an armed entry gets, refused outside the config's bounds (the
 * schema refuses them first; this guards the plan's other callers).
 * @throws SlotError bad-tries.
 */
function checkedTries(tries: number): number {
  if (Number.isInteger(tries) && tries >= TRIAL_TRIES_MIN && tries <= TRIAL_TRIES_MAX) return tries;
  throw new SlotError(
    "bad-tries",
    `boot tries must be a whole number from ${TRIAL_TRIES_MIN} to ${TRIAL_TRIES_MAX}, got ${tries}`,
  );
}

/** A file of the target slot: its name there, the bundle file it comes from, its hash. */
interface SlotFile {
  name: string;
  file: string;
  size: number;
  sha256: string;
}

function planSlotInstall(
  listing: EspListing,
  booted: Slot | undefined,
  o: {
    entry: (target: Slot, generation: number) => string;
    files: (target: Slot) => SlotFile[];
    hold?: string[];
    /** Tries the armed entry gets (`machined-b+<tries>.conf`). */
    tries: number;
  },
): InstallPlan {
  if (!booted) {
    throw new SlotError(
      "no-booted-slot",
      "the booted slot is unknown (no machined.slot= on /proc/cmdline)",
    );
  }
  const target = otherSlot(booted);
  const dir = `/${target}`;
  const generation = topGeneration(listing) + 1;
  const text = o.entry(target, generation);
  const files = o.files(target);
  const armedAs = entryFileName({ slot: target, left: checkedTries(o.tries) });
  const plan: InstallPlan = {
    target,
    generation,
    hold: o.hold,
    clean: [
      ...listing.slotFiles[target].filter((n) => n.endsWith(".new")).map((n) => rm(`${dir}/${n}`)),
      rm(tmpEntry(target)),
    ],
    receive: files.map((f) => ({ op: "receive", file: f.file, path: `${dir}/${f.name}.new` })),
    settle: [{ op: "syncDir", dir }],
    verify: files.map((f) => ({
      op: "verify",
      path: `${dir}/${f.name}.new`,
      size: f.size,
      sha256: f.sha256,
    })),
    commit: [
      ...listing.entries.filter((e) => e.name.slot === target).map((e) =>
        rm(`${ENTRIES_DIR}/${e.file}`)
      ),
      { op: "syncDir", dir: ENTRIES_DIR },
      ...files.map((f): PlanStep => ({
        op: "rename",
        from: `${dir}/${f.name}.new`,
        to: `${dir}/${f.name}`,
      })),
      { op: "syncDir", dir },
    ],
    arm: [
      { op: "writeEntry", path: tmpEntry(target), text },
      { op: "rename", from: tmpEntry(target), to: `${ENTRIES_DIR}/${armedAs}` },
      { op: "syncDir", dir: ENTRIES_DIR },
    ],
    armedAs,
  };
  assertSparesBooted(
    [...plan.clean, ...plan.receive, ...plan.settle, ...plan.commit, ...plan.arm],
    booted,
    listing,
  );
  return plan;
}

/**
 * Plan blessing the booted slot after a healthy boot: drop its counter (one
 * rename). Empty when it is already blessed. Pure.
 */
export function planBless(listing: EspListing, booted: Slot): PlanStep[] {
  const mine = listing.entries.filter((e) => e.name.slot === booted);
  const counted = mine.find((e) => e.name.left !== undefined);
  if (!counted) return [];
  const blessed = entryFileName({ slot: booted });
  // A blessed twin (a power cut mid-bless on a file system without atomic rename) goes first.
  const twins = mine.filter((e) => e !== counted && e.file === blessed);
  return [
    ...twins.map((e) => rm(`${ENTRIES_DIR}/${e.file}`)),
    { op: "rename", from: `${ENTRIES_DIR}/${counted.file}`, to: `${ENTRIES_DIR}/${blessed}` },
    { op: "syncDir", dir: ENTRIES_DIR },
  ];
}

/**
 * Plan marking the booted trial bad (it booted but did not become healthy in
 * time): rename its entry to `+0`, so it sorts last and the other slot boots
 * next. Empty when the booted entry is not a trial (a blessed slot is never
 * marked bad by this). Pure.
 */
export function planMarkBad(listing: EspListing, booted: Slot): PlanStep[] {
  const counted = listing.entries.find((e) => e.name.slot === booted && e.name.left !== undefined);
  // A `+0` entry is already bad: the loader booted it on its last try.
  if (!counted || counted.name.left === 0) return [];
  const bad = entryFileName({ slot: booted, left: 0, done: counted.name.done ?? 0 });
  return [
    { op: "rename", from: `${ENTRIES_DIR}/${counted.file}`, to: `${ENTRIES_DIR}/${bad}` },
    { op: "syncDir", dir: ENTRIES_DIR },
  ];
}

/**
 * Plan a rollback to the slot not booted: rewrite its entry with the top
 * generation + 1, so it sorts first. Pure.
 * @throws SlotError nothing-to-roll-back (no entry) or slot-bad (not blessed).
 */
export function planRollback(
  listing: EspListing,
  booted: Slot | undefined,
  entryText: (e: Entry) => string,
): { target: Slot; steps: PlanStep[] } {
  if (!booted) throw new SlotError("no-booted-slot", "the booted slot is unknown");
  const target = otherSlot(booted);
  const entry = listing.entries.find((e) => e.name.slot === target);
  const state = slotState(entry?.name);
  if (!entry) {
    throw new SlotError("nothing-to-roll-back", `slot ${target} holds no image to roll back to`);
  }
  if (state !== "blessed") {
    throw new SlotError(
      "slot-bad",
      `slot ${target} is ${state} (${entry.file}), not a known-good image`,
    );
  }
  const text = entryText(entry).replace(
    /^version\s+\d+\s*$/m,
    `version ${topGeneration(listing) + 1}`,
  );
  const steps: PlanStep[] = [
    { op: "writeEntry", path: tmpEntry(target), text },
    { op: "rename", from: tmpEntry(target), to: `${ENTRIES_DIR}/${entry.file}` },
    { op: "syncDir", dir: ENTRIES_DIR },
  ];
  assertSparesBooted(steps, booted, listing);
  return { target, steps };
}

/**
 * The guard every plan passes: no step names the booted slot's directory or
 * its entry.
 * @throws SlotError booted-slot naming the step.
 */
export function assertSparesBooted(steps: PlanStep[], booted: Slot, listing: EspListing): void {
  const entries = new Set(
    listing.entries.filter((e) => e.name.slot === booted).map((e) => `${ENTRIES_DIR}/${e.file}`),
  );
  for (const s of steps) {
    for (const p of stepPaths(s)) {
      if (p.startsWith(`/${booted}/`) || entries.has(p) || p === tmpEntry(booted)) {
        throw new SlotError(
          "booted-slot",
          `refusing ${s.op} ${p}: it belongs to the booted slot ${booted}`,
        );
      }
    }
  }
}

/** The paths a step touches. Pure. */
export function stepPaths(s: PlanStep): string[] {
  switch (s.op) {
    case "rename":
      return [s.from, s.to];
    case "syncDir":
      return [];
    default:
      return [s.path];
  }
}

function rm(path: string): PlanStep {
  return { op: "remove", path };
}
