/**
 * The one write machined makes to the booted slot's boot medium: `machine.kernel.args` changed
 * on a running node go into the booted slot's loader entry, so they are booted after one
 * reboot. Everything else of the booted slot (its kernel, initramfs, root image, UKI, and every
 * other line of its entry) is never written: the plan is a pure function of the entry's text,
 * names exactly one file and one line, and {@link assertOnlyOptionsLine} refuses any plan that
 * would do more. The new entry is written beside it and renamed over it (one rename), so a
 * power cut leaves the old entry or the new one whole, never a mix.
 * @module
 */
import {
  applyRecordedKernelArgs,
  checkCmdlineSize,
  type KernelArgs,
  KernelArgsError,
} from "../config/mod.ts";
import { entryBootsUki } from "../layout/mod.ts";
import { SlotError } from "../bundle/mod.ts";
import { ENTRIES_DIR, type Slot } from "./entries.ts";
import type { EspListing, PlanStep } from "./slot_plan.ts";
import { stepPaths } from "./slot_plan.ts";

/** The rewrite of one `options` line: which file, which line (0-based), before and after. */
export interface BootedArgsPlan {
  slot: Slot;
  /** The entry's path on the ESP (`/loader/entries/machined-a.conf`). */
  path: string;
  /** Its file name. */
  file: string;
  /** Index of the `options` line in the entry's lines. */
  line: number;
  /** The command line before and after. */
  before: string;
  after: string;
  /** The entry's whole new text (equal to the old but for that line). */
  text: string;
  /** Write beside, rename over, sync the directory. Empty when `before` equals `after`. */
  steps: PlanStep[];
}

/** What the booted slot's entry allows: a plain entry's line plan, or a signed UKI (no write). */
export type BootedArgsDecision =
  | { kind: "entry"; plan: BootedArgsPlan }
  | { kind: "uki"; slot: Slot; file: string };

/** Where the new entry is written before its rename (never an entry name systemd-boot reads). */
export function bootedArgsTmp(slot: Slot): string {
  return `${ENTRIES_DIR}/machined-${slot.toLowerCase()}.cmdline.tmp`;
}

/**
 * Plan writing `args` into the booted slot's entry. Pure.
 * @throws SlotError no-booted-slot (unknown booted slot), no-entry (none, or more than one,
 *   entry for it), bad-entry (not exactly one `options` line), kernel-args (a refused arg, or
 *   a line longer than the kernel keeps).
 */
export function planBootedArgs(
  listing: EspListing,
  booted: Slot | undefined,
  entryText: (file: string) => string,
  args: KernelArgs,
): BootedArgsDecision {
  if (!booted) {
    throw new SlotError(
      "no-booted-slot",
      "the booted slot is unknown (no machined.slot= on /proc/cmdline)",
    );
  }
  const mine = listing.entries.filter((e) => e.name.slot === booted);
  if (mine.length !== 1) {
    throw new SlotError(
      "no-entry",
      `slot ${booted} has ${mine.length} loader entries (${
        mine.map((e) => e.file).join(", ") || "none"
      }), not one`,
    );
  }
  const file = mine[0].file;
  const path = `${ENTRIES_DIR}/${file}`;
  const text = entryText(file);
  if (entryBootsUki(text)) return { kind: "uki", slot: booted, file };
  const lines = text.split("\n");
  const at = lines.flatMap((l, i) => (/^options(\s|$)/.test(l) ? [i] : []));
  if (at.length !== 1) {
    throw new SlotError("bad-entry", `${path} has ${at.length} options lines, not one`);
  }
  const before = lines[at[0]].replace(/^options\s*/, "");
  let after: string;
  try {
    after = checkCmdlineSize(applyRecordedKernelArgs(before, args));
  } catch (e) {
    if (e instanceof KernelArgsError) throw new SlotError("kernel-args", e.message);
    throw e;
  }
  const next = [...lines];
  next[at[0]] = `options ${after}`;
  const newText = next.join("\n");
  const tmp = bootedArgsTmp(booted);
  const steps: PlanStep[] = before === after ? [] : [
    { op: "writeEntry", path: tmp, text: newText },
    { op: "rename", from: tmp, to: path },
    { op: "syncDir", dir: ENTRIES_DIR },
  ];
  const plan = { slot: booted, path, file, line: at[0], before, after, text: newText, steps };
  assertOnlyOptionsLine(text, plan);
  return { kind: "entry", plan };
}

/**
 * The guard of every booted-args plan: its steps touch only the entry and its temporary
 * file, and the new text differs from `oldText` in the `options` line alone.
 * @throws SlotError booted-slot naming what it would have changed.
 */
export function assertOnlyOptionsLine(oldText: string, plan: BootedArgsPlan): void {
  const allowed = new Set([plan.path, bootedArgsTmp(plan.slot)]);
  for (const s of plan.steps) {
    for (const p of stepPaths(s)) {
      if (!allowed.has(p)) {
        throw new SlotError("booted-slot", `refusing ${s.op} ${p}: only ${plan.path} may change`);
      }
    }
  }
  const a = oldText.split("\n");
  const b = plan.text.split("\n");
  const changed = b.flatMap((l, i) => (l !== a[i] ? [i] : []));
  if (a.length !== b.length || changed.some((i) => i !== plan.line || !/^options /.test(b[i]))) {
    throw new SlotError(
      "booted-slot",
      `refusing to rewrite ${plan.path}: only its options line may change`,
    );
  }
}
