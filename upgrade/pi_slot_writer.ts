/**
 * Carries out the Raspberry Pi 3's A/B plans (pi_slot_plan.ts) on the boot
 * FAT through the same {@link EspBackend} as the ESP path (the partition is
 * a vfat with the EFI System type in the GPT, imager/rpi/pi_disk.ts): read
 * slot.txt, trial.txt and the slot directories, then plan an install (run by
 * slot_writer.ts's streaming install), bless, mark a trial bad, roll back,
 * and describe the slots for UpgradeStatus. The upgrade service picks these
 * by the image's board (slot_layout.ts).
 */
import type { EspBackend, EspFiles } from "../platform/esp/mod.ts";
import { PI_BOOT_FILES } from "../layout/mod.ts";
import type { Slot } from "./entries.ts";
import { type InstallPlanner, runSteps } from "./slot_writer.ts";
import {
  type PiBootListing,
  piBootOutcome,
  piBootState,
  planPiBless,
  planPiInstall,
  planPiRollback,
} from "./pi_slot_plan.ts";
import { SLOT_FILES } from "../bundle/mod.ts";
import type { SlotEntry } from "./upgrade_status.ts";

/** Read slot.txt, trial.txt (empty when missing) and the slot directories. */
export async function readPiListing(fs: EspFiles): Promise<PiBootListing> {
  const text = (p: string) => fs.readText(p).catch(() => "");
  return {
    slotTxt: await text(PI_BOOT_FILES.slot),
    trialTxt: await text(PI_BOOT_FILES.trial),
    slotFiles: { A: await fs.list("/A"), B: await fs.list("/B") },
  };
}

/** The Pi's install planner: no version is recorded on the FAT (the release record has it). */
export const planPiInstallFrom: InstallPlanner = async (fs, booted, args) => {
  const listing = await readPiListing(fs);
  return { plan: (m) => planPiInstall(listing, booted, m, args) };
};

/** Bless the booted slot if it is the trial (slot.txt names it); false when it already was. */
export async function blessPiBooted(esp: EspBackend, booted: Slot): Promise<boolean> {
  const steps = planPiBless(await esp.read(readPiListing), booted);
  if (steps.length === 0) return false;
  await esp.write((fs) => runSteps(fs, steps));
  return true;
}

/**
 * Whether the booted slot is a trial that can be given up: slot.txt names
 * the other, so the reboot that follows starts it with no write at all
 * (machined-init consumed the try). False, and nothing to do, on the blessed
 * slot.
 */
export async function markPiBootedBad(esp: EspBackend, booted: Slot): Promise<boolean> {
  const state = piBootState(await esp.read(readPiListing));
  return piBootOutcome(state, booted) === "trial";
}

/**
 * Make the slot not booted the blessed one (reboot to use it).
 * @throws SlotError as {@link planPiRollback}.
 */
export async function rollbackPi(esp: EspBackend, booted: Slot | undefined): Promise<Slot> {
  const listing = await esp.read(readPiListing);
  const { target, steps } = planPiRollback(listing, booted);
  await esp.write((fs) => runSteps(fs, steps));
  return target;
}

/**
 * The slots as the ESP path's entries would show them, for UpgradeStatus:
 * blessed (slot.txt names it, or names it its fallback), an armed trial (one
 * try left), the booted trial (its try consumed), a trial that failed
 * (`# tried`, not booted: bad). A slot with none of these, or missing a
 * file, is empty. Pure.
 */
export function piSlotEntries(listing: PiBootListing, booted: Slot | undefined): SlotEntry[] {
  const state = piBootState(listing);
  const complete = (s: Slot) => SLOT_FILES.every((f) => listing.slotFiles[s].includes(f));
  const out: SlotEntry[] = [];
  for (const slot of ["A", "B"] as const) {
    const entry = (file: string, left?: number, override?: "trial"): SlotEntry => ({
      file,
      name: { slot, left },
      generation: 0,
      state: override,
    });
    if (!complete(slot)) continue;
    if (state.armed === slot) out.push(entry(PI_BOOT_FILES.trial.slice(1), 1));
    else if (state.tried === slot) {
      out.push(entry(PI_BOOT_FILES.trial.slice(1), 0, booted === slot ? "trial" : undefined));
    } else if (state.blessed === slot || state.fallback === slot) {
      out.push(entry(PI_BOOT_FILES.slot.slice(1)));
    } else if (booted === slot) {
      // Booted, not in slot.txt, no try recorded: a trial whose try record was lost.
      out.push(entry(PI_BOOT_FILES.trial.slice(1), 0, "trial"));
    }
  }
  return out;
}

/** {@link piSlotEntries} read from the FAT. */
export async function readPiSlotEntries(
  esp: EspBackend,
  booted: Slot | undefined,
): Promise<SlotEntry[]> {
  return piSlotEntries(await esp.read(readPiListing), booted);
}
