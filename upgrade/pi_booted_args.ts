/**
 * A Raspberry Pi's counterpart of booted_args_plan.ts: `machine.kernel.args`
 * changed on a running Pi go into the booted slot's `cmdline.txt` (the
 * firmware hands that file's one line to the kernel it loads from the slot's
 * directory, layout/pi_boot_config.ts), so they are booted after one reboot.
 * The plan is a pure function of that file's text; it names the one file,
 * writes the new line beside it and renames it over (a power cut leaves the
 * old line or the new one whole), and {@link assertOnlyCmdlineTxt} refuses
 * a plan that would touch anything else of the booted slot.
 * @module
 */
import {
  applyRecordedKernelArgs,
  checkCmdlineSize,
  type KernelArgs,
  KernelArgsError,
} from "../config/mod.ts";
import { piCmdlineTxt, piSlotPaths } from "../layout/mod.ts";
import { SlotError } from "../bundle/mod.ts";
import type { Slot } from "./entries.ts";
import { type PlanStep, stepPaths } from "./slot_plan.ts";

/** The rewrite of a Pi slot's cmdline.txt. */
export interface PiBootedArgsPlan {
  slot: Slot;
  /** `/A/cmdline.txt`. */
  path: string;
  before: string;
  after: string;
  /** Write beside, rename over, sync the slot's directory. Empty when the line is unchanged. */
  steps: PlanStep[];
}

/**
 * Plan writing `args` into the booted slot's cmdline.txt, whose text is `text`. Pure.
 * @throws SlotError no-booted-slot (unknown booted slot), bad-entry (an empty file, or more
 *   than one line: not what the imager or an upgrade wrote), kernel-args (a refused arg, or a
 *   line longer than the kernel keeps).
 */
export function planPiBootedArgs(
  booted: Slot | undefined,
  text: string,
  args: KernelArgs,
): PiBootedArgsPlan {
  if (!booted) {
    throw new SlotError(
      "no-booted-slot",
      "the booted slot is unknown (no machined.slot= on /proc/cmdline)",
    );
  }
  const { dir, cmdline: path } = piSlotPaths(booted);
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== 1) {
    throw new SlotError("bad-entry", `${path} has ${lines.length} lines, not one`);
  }
  const before = lines[0].trim();
  let after: string;
  try {
    after = checkCmdlineSize(applyRecordedKernelArgs(before, args));
  } catch (e) {
    if (e instanceof KernelArgsError) throw new SlotError("kernel-args", e.message);
    throw e;
  }
  const tmp = `${path}.tmp`;
  const steps: PlanStep[] = before === after ? [] : [
    { op: "writeEntry", path: tmp, text: piCmdlineTxt(after) },
    { op: "rename", from: tmp, to: path },
    { op: "syncDir", dir },
  ];
  const plan = { slot: booted, path, before, after, steps };
  assertOnlyCmdlineTxt(plan);
  return plan;
}

/**
 * The guard of every Pi booted-args plan: its steps touch only the slot's cmdline.txt and its
 * temporary file.
 * @throws SlotError booted-slot naming what it would have changed.
 */
export function assertOnlyCmdlineTxt(plan: Pick<PiBootedArgsPlan, "path" | "steps">): void {
  const allowed = new Set([plan.path, `${plan.path}.tmp`]);
  for (const s of plan.steps) {
    for (const p of stepPaths(s)) {
      if (!allowed.has(p)) {
        throw new SlotError("booted-slot", `refusing ${s.op} ${p}: only ${plan.path} may change`);
      }
    }
  }
}
