/**
 * The loader entries of the A/B layout and systemd-boot's choice between
 * them, as pure functions. Both entries share `sort-key machined` and differ
 * by `version` (a generation, bumped on every install), loader.conf says
 * `default machined-*`, and a trial entry carries boot counting in its file
 * name (`machined-b+3.conf`; the loader renames it `machined-b+2-1.conf`
 * before starting it). The behaviour modelled here is the one measured in
 * QEMU with systemd-boot 252 (../shared/designs/upgrade-and-reset.md).
 */
import { type Slot, slotOfCmdline } from "../layout/mod.ts";

export type { Slot };

/** The directory of loader entries on the ESP. */
export const ENTRIES_DIR = "/loader/entries";
/** Tries a freshly armed slot gets unless `machine.upgrade.boot_tries` says otherwise. */
export const TRIAL_TRIES = 3;
/** The bounds of `machine.upgrade.boot_tries`: one try at least, and no loop a node could sit in for hours. */
export const TRIAL_TRIES_MIN = 1;
export const TRIAL_TRIES_MAX = 10;

/** A parsed entry file name. */
export interface EntryName {
  slot: Slot;
  /** Tries left; undefined for an entry without counting (blessed). */
  left?: number;
  /** Tries done (the loader's `-N`). */
  done?: number;
}

const NAME = /^machined-([ab])(?:\+(\d+)(?:-(\d+))?)?\.conf$/;

/** Parse `machined-b+2-1.conf`; undefined for any other file. Pure. */
export function parseEntryName(file: string): EntryName | undefined {
  const m = NAME.exec(file);
  if (!m) return undefined;
  const slot = m[1].toUpperCase() as Slot;
  if (m[2] === undefined) return { slot };
  return { slot, left: Number(m[2]), done: m[3] === undefined ? undefined : Number(m[3]) };
}

/** The file name of an entry. Pure. */
export function entryFileName(e: EntryName): string {
  const base = `machined-${e.slot.toLowerCase()}`;
  if (e.left === undefined) return `${base}.conf`;
  return `${base}+${e.left}${e.done === undefined ? "" : `-${e.done}`}.conf`;
}

/** The state of a slot as its entry name says. */
export type SlotState = "empty" | "blessed" | "trial" | "bad";

/** blessed (no counter), trial (tries left), bad (`+0`), or empty (no entry). Pure. */
export function slotState(e: EntryName | undefined): SlotState {
  if (!e) return "empty";
  if (e.left === undefined) return "blessed";
  return e.left > 0 ? "trial" : "bad";
}

/** One entry on the ESP: its file name, parsed name and `version` (generation). */
export interface Entry {
  file: string;
  name: EntryName;
  generation: number;
}

/** The `version` line of an entry's text, as a number (0 when missing). Pure. */
export function entryGeneration(text: string): number {
  const m = /^version\s+(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Our entries in systemd-boot 252's order: entries with no tries left last,
 * then (same sort-key) the higher version first, then the id descending.
 * Pure.
 */
export function sortEntries(entries: readonly Entry[]): Entry[] {
  return [...entries].sort((a, b) => {
    const dead = Number(a.name.left === 0) - Number(b.name.left === 0);
    if (dead !== 0) return dead;
    if (a.generation !== b.generation) return b.generation - a.generation;
    return a.file < b.file ? 1 : a.file > b.file ? -1 : 0;
  });
}

/**
 * What the loader boots: the first entry in order (`default machined-*`
 * matches every one of ours), and the file's name after the loader's own
 * counter rename. Undefined with no entry. Pure.
 */
export function bootChoice(
  entries: readonly Entry[],
): { entry: Entry; renamedTo: string } | undefined {
  const entry = sortEntries(entries)[0];
  if (!entry) return undefined;
  const { left, done } = entry.name;
  if (left === undefined || left === 0) return { entry, renamedTo: entry.file };
  return {
    entry,
    renamedTo: entryFileName({ slot: entry.name.slot, left: left - 1, done: (done ?? 0) + 1 }),
  };
}

/** The other slot. Pure. */
export function otherSlot(slot: Slot): Slot {
  return slot === "A" ? "B" : "A";
}

/**
 * The slot `machined.slot=` names on a kernel command line: undefined when
 * none or more than one do (layout's slotOfCmdline). Pure.
 */
export function bootedSlot(cmdline: string): Slot | undefined {
  return slotOfCmdline(cmdline);
}
