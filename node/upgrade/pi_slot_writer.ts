/**
 * Carries out the Raspberry Pi 3's A/B plans (pi_slot_plan.ts) on the boot
 * FAT through the same {@link EspBackend} as the ESP path (the partition is
 * a vfat with the EFI System type in the GPT, imager/rpi/pi_disk.ts): read
 * slot.txt, trial.txt and the slot directories, then bless, acknowledge a
 * failed trial, or roll back. Not yet wired into the upgrade service
 * (node_wiring.ts runs the ESP plans); an install reuses slot_writer.ts's
 * streaming with {@link planPiInstall}'s steps.
 */
import type { EspBackend, EspFiles } from "../../platform/esp/mod.ts";
import { PI_BOOT_FILES } from "../../imager/rpi/boot_config.ts";
import type { Slot } from "./entries.ts";
import { runSteps } from "./slot_writer.ts";
import {
  type PiBootListing,
  piBootOutcome,
  piBootState,
  planPiAcknowledge,
  planPiBless,
  planPiRollback,
} from "./pi_slot_plan.ts";

/** Read slot.txt, trial.txt (empty when missing) and the slot directories. */
export async function readPiListing(fs: EspFiles): Promise<PiBootListing> {
  const text = (p: string) => fs.readText(p).catch(() => "");
  return {
    slotTxt: await text(PI_BOOT_FILES.slot),
    trialTxt: await text(PI_BOOT_FILES.trial),
    slotFiles: { A: await fs.list("/A"), B: await fs.list("/B") },
  };
}

/**
 * After a healthy boot of `booted`: bless a trial, or acknowledge a failed
 * trial of the other slot. Returns what this boot was.
 */
export async function settlePiBoot(
  esp: EspBackend,
  booted: Slot,
): Promise<"blessed" | "trial-blessed" | "rolled-back"> {
  const listing = await esp.read(readPiListing);
  const outcome = piBootOutcome(piBootState(listing), booted);
  if (outcome === "trial") {
    await esp.write((fs) => runSteps(fs, planPiBless(listing, booted)));
    return "trial-blessed";
  }
  const ack = planPiAcknowledge(listing, booted);
  if (ack.length > 0) await esp.write((fs) => runSteps(fs, ack));
  return outcome;
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
