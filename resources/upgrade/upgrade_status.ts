/**
 * UpgradeStatus: the A/B slots as the ESP's loader entries say (version,
 * generation, blessed / trial with tries left / bad / empty, which one
 * booted), the downgrade floor, and the last upgrade's outcome. Written only
 * by the upgrade module (upgrade/upgrade_status.ts); docs/upgrade.md.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const UPGRADE_STATUS = "UpgradeStatus";
/** The single UpgradeStatus's id. */
export const UPGRADE_STATUS_ID = "upgrade";

/** A slot as its loader entry's file name says (upgrade/entries.ts). */
export type UpgradeSlotState = "empty" | "blessed" | "trial" | "bad";

/** One slot. */
export interface UpgradeSlotStatus {
  readonly slot: "A" | "B";
  /** This boot runs from it (`machined.slot=` on the command line). */
  readonly booted: boolean;
  readonly state: UpgradeSlotState;
  /** Image version its entry's title names; "" when empty or unknown. */
  readonly version: string;
  /** The entry's `version` (generation; the higher boots first); 0 when empty. */
  readonly generation: number;
  /** Boot tries the loader still gives a trial; 0 otherwise. */
  readonly triesLeft: number;
  /** The entry's file name (`machined-b+2-1.conf`); "" when empty. */
  readonly entry: string;
}

/**
 * What the last upgrade came to. `unknown` until STATE's upgrade record has
 * been read (it may name any outcome); `none` when it names none.
 */
export type UpgradeOutcome = "none" | "armed" | "upgraded" | "rolled-back" | "refused" | "unknown";

/** The last upgrade, rollback or refusal. */
export interface UpgradeLastOutcome {
  readonly outcome: UpgradeOutcome;
  /** The version installed, blessed or refused; "" when none. */
  readonly version: string;
  /** The slot it concerns; "" when none. */
  readonly slot: string;
  /** Why (a refusal's message, a rollback's cause); "" when there is nothing to say. */
  readonly reason: string;
  /** ISO time it was recorded; "" for none. */
  readonly at: string;
}

/** Where the floor in force comes from. */
export type FloorSource = "esp" | "state" | "running" | "none";

export interface UpgradeStatusSpec {
  /** The booted slot; "" when machined did not boot from one (dev mode). */
  readonly booted: string;
  /** Slots A then B. */
  readonly slots: readonly UpgradeSlotStatus[];
  /**
   * The downgrade floor in force: bundles below it, equal to it or without an
   * order are refused unless forced; "" for none.
   */
  readonly floor: string;
  /**
   * `esp`: the floor recorded on the ESP (kept across a reset); `state`: the
   * one recorded on STATE only (a node upgraded from an older version);
   * `running`: the booted image's version.
   */
  readonly floorSource: FloorSource;
  /** The recorded floor: the higher of the ESP's and STATE's; "" when none. */
  readonly storedFloor: string;
  readonly last: UpgradeLastOutcome;
}

function slotCell(s: UpgradeSlotStatus | undefined): string {
  if (!s || s.state === "empty") return "empty";
  const state = s.state === "trial" ? `trial(${s.triesLeft} left)` : s.state;
  return `${state} ${s.version || "?"} g${s.generation}${s.booted ? " (booted)" : ""}`;
}

export const upgradeStatusDescriptor: ResourceDescriptor<typeof UPGRADE_STATUS, UpgradeStatusSpec> =
  {
    type: UPGRADE_STATUS,
    namespace: "runtime",
    aliases: ["upgradestatus", "upgradestatuses", "upgrade", "us"],
    description: "A/B slots, the downgrade floor and the last upgrade's outcome",
    columns: [
      { header: "BOOTED", value: (s) => s.booted },
      { header: "A", value: (s) => slotCell(s.slots.find((x) => x.slot === "A")) },
      { header: "B", value: (s) => slotCell(s.slots.find((x) => x.slot === "B")) },
      { header: "FLOOR", value: (s) => s.floor },
      {
        header: "LAST",
        value: (s) =>
          s.last.outcome === "none" || s.last.outcome === "unknown"
            ? s.last.outcome
            : `${s.last.outcome} ${s.last.version}${s.last.slot ? ` (slot ${s.last.slot})` : ""}`,
      },
    ],
  };
