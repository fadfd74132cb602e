/**
 * The A/B plans of a Raspberry Pi 3 node, as pure functions of what its boot
 * FAT holds, with the ESP path's rules (slot_plan.ts) carried over to the
 * firmware's mechanism (layout/pi_boot_config.ts): `slot.txt` names the
 * blessed slot (`os_prefix=A/`), `trial.txt` one trial boot of the other.
 *
 * | ESP (systemd-boot)                          | Pi 3 (config.txt)                                   |
 * | ------------------------------------------- | --------------------------------------------------- |
 * | entry `machined-b+3.conf`: three tries      | `trial.txt` = `os_prefix=B/`: one try               |
 * | the loader counts a try before the kernel   | machined-init rewrites it to `# tried B` at once    |
 * | bless: rename to `machined-b.conf`          | bless: `slot.txt` = `os_prefix=B/`, trial cleared   |
 * | out of tries: sorts last, A boots           | any reboot after the try: slot.txt, A boots         |
 * | `+0` stays: B shown bad until reinstalled   | `# tried B` stays: B shown bad until reinstalled    |
 * | rollback: the other blessed entry, top gen. | rollback: slot.txt's `# fallback`, if complete      |
 * | install: first drops the target's entry     | install: first drops the target as the fallback     |
 *
 * The Pi 3's firmware has no `tryboot` (Pi 4 and 5) and no counter, so the
 * try is consumed by the first code of ours that runs; a kernel that hangs or
 * panics before machined-init would be retried (docs/decisions.md, "A/B on
 * the Raspberry Pi 3"). Every plan spares the booted slot's directory, and a
 * power cut at any step leaves slot.txt naming a complete slot.
 */
import { installCmdline } from "./slot_cmdline.ts";
import type { KernelArgs } from "../config/mod.ts";
import {
  parseFallback,
  parseOsPrefix,
  PI_BOOT_FILES,
  piCmdlineTxt,
  piSlotPaths,
  piSlotTxt,
  piTrialTxt,
} from "../layout/mod.ts";
import { otherSlot, type Slot } from "./entries.ts";
import { SlotError } from "../bundle/mod.ts";
import { type Manifest, SLOT_FILES } from "../bundle/mod.ts";
import type { InstallSteps, PlanStep } from "./slot_plan.ts";

/** What the boot FAT holds, as far as the plans care. */
export interface PiBootListing {
  /** slot.txt's text. */
  slotTxt: string;
  /** trial.txt's text. */
  trialTxt: string;
  /** File names in `/A` and `/B`. */
  slotFiles: Record<Slot, string[]>;
}

/** The slot choice read from slot.txt and trial.txt. */
export interface PiBootState {
  /** The slot slot.txt names. */
  blessed?: Slot;
  /** The other slot, while slot.txt names it a good fallback (`# fallback B`). */
  fallback?: Slot;
  /** A trial armed and not yet booted (`os_prefix=B/`). */
  armed?: Slot;
  /** A trial machined-init consumed (`# tried B`): booted once, never blessed. */
  tried?: Slot;
}

/** trial.txt once machined-init consumed the try of `slot`. */
export function piTriedTxt(slot: Slot): string {
  return `# tried ${slot}\n`;
}

/** Parse slot.txt and trial.txt. Pure. */
export function piBootState(listing: Pick<PiBootListing, "slotTxt" | "trialTxt">): PiBootState {
  const tried = /^# tried ([AB])\s*$/m.exec(listing.trialTxt)?.[1] as Slot | undefined;
  const blessed = parseOsPrefix(listing.slotTxt);
  const fallback = parseFallback(listing.slotTxt);
  return {
    blessed,
    fallback: fallback !== blessed ? fallback : undefined,
    armed: parseOsPrefix(listing.trialTxt),
    tried,
  };
}

/**
 * What this boot is: `trial` (booted ≠ blessed: bless it once healthy),
 * `rolled-back` (the blessed slot booted after the other's try was consumed:
 * that trial failed; `# tried` stays, as the ESP's `+0` does, so the slot
 * reads bad until it is installed again), or `blessed`. Pure.
 */
export function piBootOutcome(
  state: PiBootState,
  booted: Slot,
): "trial" | "rolled-back" | "blessed" {
  if (state.blessed !== booted) return "trial";
  return state.tried === otherSlot(booted) ? "rolled-back" : "blessed";
}

/**
 * An install: like the ESP's, with the firmware's files in place of a loader
 * entry; the commit point is trial.txt naming the target (one rename).
 */
export type PiInstallPlan = InstallSteps;

const tmp = (path: string) => `${path}.tmp`;

/** Write `text` at `path` by a temporary file and one rename. */
function replace(path: string, text: string, dir = "/"): PlanStep[] {
  return [
    { op: "writeEntry", path: tmp(path), text },
    { op: "rename", from: tmp(path), to: path },
    { op: "syncDir", dir },
  ];
}

/**
 * Plan installing `manifest` into the slot that is not `booted`: disarm a
 * trial naming it, receive the files as `*.new`, re-hash them from a fresh
 * mount, then disarm, rename them in, write its cmdline.txt (the manifest's
 * command line with machine.kernel.args and the slot's words), and arm trial.txt. The slot's device trees stay (they are the image's).
 * @throws SlotError no-booted-slot.
 */
export function planPiInstall(
  listing: PiBootListing,
  booted: Slot | undefined,
  manifest: Manifest,
  args?: KernelArgs,
): PiInstallPlan {
  if (!booted) throw new SlotError("no-booted-slot", "the booted slot is unknown");
  const target = otherSlot(booted);
  const p = piSlotPaths(target);
  const state = piBootState(listing);
  const plan: PiInstallPlan = {
    target,
    clean: listing.slotFiles[target].filter((n) => n.endsWith(".new") || n.endsWith(".tmp"))
      .map((n) => ({ op: "remove", path: `${p.dir}/${n}` })),
    receive: SLOT_FILES.map((f) => ({ op: "receive", file: f, path: `${p.dir}/${f}.new` })),
    settle: [{ op: "syncDir", dir: p.dir }],
    verify: manifest.files.map((f) => ({
      op: "verify",
      path: `${p.dir}/${f.name}.new`,
      size: f.size,
      sha256: f.sha256,
    })),
    commit: [
      // Disarm: the target stops being a fallback, then stops being a trial.
      ...(state.fallback === target
        ? replace(PI_BOOT_FILES.slot, piSlotTxt(state.blessed ?? booted))
        : []),
      ...(state.armed === target || state.tried === target
        ? replace(PI_BOOT_FILES.trial, piTrialTxt())
        : []),
      ...SLOT_FILES.map((f): PlanStep => ({
        op: "rename",
        from: `${p.dir}/${f}.new`,
        to: `${p.dir}/${f}`,
      })),
      ...replace(p.cmdline, piCmdlineTxt(installCmdline(manifest, target, args)), p.dir),
    ],
    arm: replace(PI_BOOT_FILES.trial, piTrialTxt(target)),
    armedAs: PI_BOOT_FILES.trial.slice(1),
  };
  assertPiSparesBooted(
    [...plan.clean, ...plan.receive, ...plan.settle, ...plan.commit, ...plan.arm],
    booted,
  );
  return plan;
}

/**
 * Plan blessing the booted trial after a healthy boot (the ESP path's rule:
 * MachineStatus ready): slot.txt names it (and the slot blessed before as
 * its fallback), then trial.txt is cleared. Empty when it is blessed
 * already. Pure.
 */
export function planPiBless(listing: PiBootListing, booted: Slot): PlanStep[] {
  const state = piBootState(listing);
  if (state.blessed === booted) return [];
  // The slot blessed until now stays good: it is the fallback.
  return [
    ...replace(PI_BOOT_FILES.slot, piSlotTxt(booted, state.blessed)),
    ...replace(PI_BOOT_FILES.trial, piTrialTxt()),
  ];
}

/**
 * Plan a rollback to the slot not booted: slot.txt names it, with the booted
 * slot as its fallback. It must be slot.txt's fallback (a slot once blessed
 * and not installed over since), hold every slot file and its cmdline.txt,
 * no unfinished install, and must not be a trial that failed.
 * @throws SlotError no-booted-slot, nothing-to-roll-back or slot-bad.
 */
export function planPiRollback(
  listing: PiBootListing,
  booted: Slot | undefined,
): { target: Slot; steps: PlanStep[] } {
  if (!booted) throw new SlotError("no-booted-slot", "the booted slot is unknown");
  const target = otherSlot(booted);
  const files = listing.slotFiles[target];
  const missing = [...SLOT_FILES, "cmdline.txt"].filter((f) => !files.includes(f));
  if (missing.length > 0) {
    throw new SlotError("nothing-to-roll-back", `slot ${target} lacks ${missing.join(", ")}`);
  }
  const state = piBootState(listing);
  if (files.some((n) => n.endsWith(".new")) || state.tried === target || state.armed === target) {
    throw new SlotError("slot-bad", `slot ${target} is an unfinished install or a failed trial`);
  }
  if (state.fallback !== target) {
    throw new SlotError("slot-bad", `slot ${target} was never blessed since it was last written`);
  }
  const steps = [
    ...replace(PI_BOOT_FILES.slot, piSlotTxt(target, booted)),
    ...replace(PI_BOOT_FILES.trial, piTrialTxt()),
  ];
  assertPiSparesBooted(steps, booted);
  return { target, steps };
}

/**
 * No step names the booted slot's directory.
 * @throws SlotError booted-slot naming the step.
 */
export function assertPiSparesBooted(steps: PlanStep[], booted: Slot): void {
  for (const s of steps) {
    const paths = s.op === "rename" ? [s.from, s.to] : s.op === "syncDir" ? [s.dir] : [s.path];
    for (const path of paths) {
      if (path === `/${booted}` || path.startsWith(`/${booted}/`)) {
        throw new SlotError("booted-slot", `refusing ${s.op} ${path}: slot ${booted} is booted`);
      }
    }
  }
}
