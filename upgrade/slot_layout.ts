/**
 * A slot layout: how one boot mechanism keeps slots A and B, as the upgrade
 * service uses it. Two exist, chosen by the image's board (its release
 * record's `board=`, the bundle's `compatible.board`):
 *
 * - `uefi-pc`: systemd-boot's loader entries with boot counting (slot_plan.ts);
 * - `rpi3`: the Pi 3 firmware's config.txt, slot.txt and a one-shot trial.txt
 *   (pi_slot_plan.ts).
 *
 * Both share the streaming install (slot_writer.ts's installBundle with the
 * layout's planner), the EspBackend, the trust, floor and compatibility
 * checks, and the rule that the booted slot is never written.
 */
import type { EspBackend } from "../platform/esp/mod.ts";
import type { Slot } from "./entries.ts";
import { RPI3_BOARD, UEFI_BOARD } from "../bundle/mod.ts";
import {
  blessBooted,
  type InstallPlanner,
  markBootedBad,
  planEspInstall,
  rollbackSlot,
} from "./slot_writer.ts";
import {
  blessPiBooted,
  markPiBootedBad,
  planPiInstallFrom,
  readPiSlotEntries,
  rollbackPi,
} from "./pi_slot_writer.ts";
import { readSlotEntries, type SlotEntry } from "./upgrade_status.ts";

/** What the upgrade service does through a layout. */
export interface SlotLayout {
  /** The board whose mechanism this is. */
  readonly board: string;
  /**
   * Whether an upgrade may reboot by kexec (kexec_reboot.ts reads the loader
   * entry); the Pi's firmware must read config.txt, so its reboots are cold.
   */
  readonly kexec: boolean;
  /** Reads the boot partition and plans an install into the slot not booted. */
  readonly planner: InstallPlanner;
  /** Bless the booted trial; false when it was blessed already. */
  bless(esp: EspBackend, booted: Slot): Promise<boolean>;
  /** Give up the booted trial so the next boot starts the other slot; false when not a trial. */
  markBad(esp: EspBackend, booted: Slot): Promise<boolean>;
  /** Make the other, complete and blessed, slot boot next. @throws SlotError */
  rollback(esp: EspBackend, booted: Slot | undefined): Promise<Slot>;
  /** The slots as entries, for UpgradeStatus. */
  entries(esp: EspBackend, booted: Slot | undefined): Promise<SlotEntry[]>;
}

/** systemd-boot's loader entries on the ESP. */
export const UEFI_LAYOUT: SlotLayout = {
  board: UEFI_BOARD,
  kexec: true,
  planner: planEspInstall,
  bless: blessBooted,
  markBad: markBootedBad,
  rollback: rollbackSlot,
  entries: (esp) => readSlotEntries(esp),
};

/** The Raspberry Pi 3's boot FAT. */
export const RPI3_LAYOUT: SlotLayout = {
  board: RPI3_BOARD,
  kexec: false,
  planner: planPiInstallFrom,
  bless: blessPiBooted,
  markBad: markPiBootedBad,
  rollback: rollbackPi,
  entries: readPiSlotEntries,
};

/** The layout of `board`; a board without one of its own is a UEFI PC. Pure. */
export function slotLayoutFor(board: string): SlotLayout {
  return board === RPI3_BOARD ? RPI3_LAYOUT : UEFI_LAYOUT;
}
