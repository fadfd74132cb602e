/**
 * The UpgradeStatus resource: the slots as the ESP's loader entries say
 * (read through the EspBackend; on a Pi 3 its slot.txt and trial.txt, as
 * pi_slot_writer.ts renders them), the downgrade floor (the ESP's floor
 * file, esp_floor.ts, and the {@link UpgradeBook}'s) and the last outcome. {@link upgradeStatus} derives it, purely;
 * {@link UpgradeStatusPublisher} reads the ESP, raises the floor when the
 * booted slot is blessed, and writes the resource, which it alone owns.
 */
import type { MachineStore } from "../resources/mod.ts";
import {
  UPGRADE_STATUS,
  UPGRADE_STATUS_ID,
  type UpgradeLastOutcome,
  type UpgradeSlotStatus,
  type UpgradeStatusSpec,
} from "../resources/mod.ts";
import type { EspBackend } from "../platform/esp/mod.ts";
import { ENTRIES_DIR, type Entry, type Slot, type SlotState, slotState } from "./entries.ts";
import { readListing } from "./slot_writer.ts";
import type { UpgradeBook } from "./upgrade_record.ts";
import { effectiveFloor, entryVersion, recordedFloor } from "./version_floor.ts";
import { readEspFloor } from "./esp_floor.ts";

/** The owner of the UpgradeStatus resource. */
export const UPGRADE_STATUS_OWNER = "upgrade";

/** One of our entries with the image version its title names. */
export interface SlotEntry extends Entry {
  version?: string;
  /** The state when the name alone does not say it (the Pi's booted trial: no try left). */
  state?: SlotState;
}

/** Slot A then B, from the entries found (the first of a slot's entries counts). Pure. */
export function slotStatuses(
  entries: readonly SlotEntry[],
  booted: Slot | undefined,
  /** Versions machined ran from each slot, for entries that name none (the imager's). */
  ran: Partial<Record<Slot, string>> = {},
): UpgradeSlotStatus[] {
  return (["A", "B"] as const).map((slot) => {
    // A power cut mid-bless can leave a counted twin: the counted (pessimistic) one counts.
    const mine = entries.filter((e) => e.name.slot === slot)
      .sort((a, b) => Number(b.name.left !== undefined) - Number(a.name.left !== undefined));
    const e = mine[0];
    const state = e?.state ?? slotState(e?.name);
    return {
      slot,
      booted: slot === booted,
      state,
      version: e ? e.version ?? ran[slot] ?? "" : "",
      generation: e?.generation ?? 0,
      triesLeft: state === "trial" ? e!.name.left! : 0,
      entry: e?.file ?? "",
    };
  });
}

const NONE: UpgradeLastOutcome = { outcome: "none", version: "", slot: "", reason: "", at: "" };
const UNKNOWN: UpgradeLastOutcome = {
  ...NONE,
  outcome: "unknown",
  reason: "STATE's upgrade record has not been read yet",
};

/**
 * The last outcome as it stands now: an armed slot that the loader gave up
 * on (`+0`, its tries used up by panics, hangs or resets) while the other
 * slot booted is a rollback, and an armed slot found blessed is an upgrade.
 * With nothing noted this boot and STATE's record not read yet, `unknown`:
 * the record may name any outcome, and `none` would say it names none.
 * Pure.
 */
export function currentOutcome(
  last: UpgradeLastOutcome | undefined,
  slots: readonly UpgradeSlotStatus[],
  recordRead = true,
): UpgradeLastOutcome {
  if (!last) return recordRead ? NONE : UNKNOWN;
  if (last.outcome !== "armed") return last;
  const target = slots.find((s) => s.slot === last.slot);
  const booted = slots.find((s) => s.booted);
  if (target?.state === "bad" && booted && booted !== target) {
    return {
      ...last,
      outcome: "rolled-back",
      reason: `slot ${target.slot} used its boot tries without becoming healthy ` +
        `(a panic, a hang or a reset each time); the loader fell back to slot ${booted.slot}`,
    };
  }
  if (target?.state === "blessed" && target.booted && target.version === last.version) {
    return { ...last, outcome: "upgraded" };
  }
  return last;
}

/** The whole UpgradeStatus. Pure. */
export function upgradeStatus(o: {
  booted: Slot | undefined;
  entries: readonly SlotEntry[];
  /** The floor in STATE's upgrade record. */
  storedFloor: string | undefined;
  /** The floor in the ESP's floor file (esp_floor.ts). */
  espFloor?: string;
  last: UpgradeLastOutcome | undefined;
  /** Whether STATE's record has been read. @default true */
  recordRead?: boolean;
  ran?: Partial<Record<Slot, string>>;
}): UpgradeStatusSpec {
  const slots = slotStatuses(o.entries, o.booted, o.ran);
  const running = slots.find((s) => s.booted)?.version || undefined;
  const recorded = recordedFloor(o.espFloor, o.storedFloor);
  const { floor, source } = effectiveFloor(
    recorded.floor,
    running,
    recorded.source === "esp" ? "esp" : "state",
  );
  return {
    booted: o.booted ?? "",
    slots,
    floor: floor ?? "",
    floorSource: source,
    storedFloor: recorded.floor ?? "",
    last: currentOutcome(o.last, slots, o.recordRead ?? true),
  };
}

/** Our entries on the ESP with their generations and versions. */
export function readSlotEntries(esp: EspBackend): Promise<SlotEntry[]> {
  return esp.read(async (fs) => {
    const { entries } = await readListing(fs);
    const out: SlotEntry[] = [];
    for (const e of entries) {
      out.push({ ...e, version: entryVersion(await fs.readText(`${ENTRIES_DIR}/${e.file}`)) });
    }
    return out;
  });
}

/** See the module doc. */
export class UpgradeStatusPublisher {
  constructor(
    private readonly deps: {
      store: MachineStore;
      esp: EspBackend;
      book: UpgradeBook;
      booted: () => Promise<Slot | undefined>;
      /** The slots' entries. @default readSlotEntries (the ESP's loader entries) */
      readEntries?: (booted: Slot | undefined) => Promise<SlotEntry[]>;
      /** The running image's version (its release record); undefined outside an image. */
      imageVersion?: () => Promise<string | undefined>;
    },
  ) {}

  /**
   * Read the ESP and STATE's record, raise the floor when the booted slot is
   * blessed, and write UpgradeStatus.
   * @throws what reading the ESP throws (nothing is written then).
   */
  async refresh(): Promise<UpgradeStatusSpec> {
    const { book } = this.deps;
    const booted = await this.deps.booted();
    const entries = await (this.deps.readEntries?.(booted) ?? readSlotEntries(this.deps.esp));
    await book.sync();
    const running = await this.deps.imageVersion?.().catch(() => undefined);
    if (booted && running) await book.noteRan(booted, running);
    const mine = slotStatuses(entries, booted, book.ran).find((s) => s.booted);
    if (mine?.state === "blessed") await book.raise(mine.version || undefined);
    const spec = upgradeStatus({
      booted,
      entries,
      storedFloor: book.floor,
      espFloor: await readEspFloor(this.deps.esp),
      last: book.last,
      recordRead: book.loaded,
      ran: book.ran,
    });
    await this.deps.store.modify(
      { type: UPGRADE_STATUS, namespace: "runtime", id: UPGRADE_STATUS_ID },
      UPGRADE_STATUS_OWNER,
      () => spec,
    );
    return spec;
  }
}
