/**
 * Carries out the slot plans (slot_plan.ts) on an {@link EspBackend}: reads
 * the ESP's listing, streams a bundle into the target slot's `*.new` files,
 * re-hashes them from a fresh read-only mount, commits them, and arms the
 * entry. A refused bundle leaves only the removal of its own `*.new` files.
 */
import type { EspBackend, EspFiles } from "../platform/esp/mod.ts";
import {
  BundleError,
  MAX_UKI_BYTES,
  openBundle,
  UPGRADE_DEADLINE_MS,
  withDeadlines,
} from "../bundle/mod.ts";
import { ENTRIES_DIR, type Entry, entryGeneration, parseEntryName, type Slot } from "./entries.ts";
import { SlotError } from "../bundle/mod.ts";
import { entryBootsUki } from "../layout/mod.ts";
import { checkSize } from "./install_guards.ts";
import { extensionDecision, type ExtensionVerdict } from "./extension_drop.ts";
import { receiveHeld, receiveInto, removeReceived, runSteps } from "./install_receive.ts";
import {
  entryVersion,
  floorDecision,
  type FloorVerdict,
  type RecordedSource,
} from "./version_floor.ts";
import type { Compatible, Manifest } from "../bundle/mod.ts";
import type { TrustedKey } from "../bundle/mod.ts";
import type { KernelArgs } from "../config/mod.ts";
import {
  bootedOnLastTry,
  type EspListing,
  type InstallSteps,
  planBless,
  planInstall,
  planMarkBad,
  planRollback,
  planUkiInstall,
} from "./slot_plan.ts";

export { runSteps } from "./install_receive.ts";

/** Progress of an install, in order. */
export type InstallEvent =
  | { phase: "received"; bytes: number; total: number }
  | { phase: "verified"; version: string; kid: string }
  | { phase: "written"; slot: Slot }
  | { phase: "armed"; slot: Slot; entry: string };

/** Read our entries and the slot directories. */
export async function readListing(fs: EspFiles): Promise<EspListing> {
  const entries: Entry[] = [];
  for (const file of await fs.list(ENTRIES_DIR)) {
    const name = parseEntryName(file);
    if (!name) continue;
    entries.push({
      file,
      name,
      generation: entryGeneration(await fs.readText(`${ENTRIES_DIR}/${file}`)),
    });
  }
  return { entries, slotFiles: { A: await fs.list("/A"), B: await fs.list("/B") } };
}

/**
 * How a boot mechanism is read before an install: the booted slot's version
 * if it records one, and a planner for the verified manifest.
 */
export type InstallPlanner = (
  fs: EspFiles,
  booted: Slot | undefined,
  args?: KernelArgs,
  tries?: number,
) => Promise<{ running?: string; plan: (m: Manifest) => InstallSteps }>;

/**
 * The ESP's planner: loader entries, the booted entry's title for its version;
 * a Secure Boot bundle (`boot: "uki"`) planned as signed UKIs.
 * @throws SlotError signed-boot (from the plan) for a plain bundle when the
 *   booted entry starts a UKI (`efi`): its unsigned kernel would not boot.
 */
export const planEspInstall: InstallPlanner = async (fs, booted, args, tries) => {
  const listing = await readListing(fs);
  const mine = listing.entries.find((e) => e.name.slot === booted);
  const text = mine ? await fs.readText(`${ENTRIES_DIR}/${mine.file}`) : "";
  const plan = (m: Manifest) => {
    if (m.boot === "uki") return planUkiInstall(listing, booted, m, tries);
    if (entryBootsUki(text)) {
      throw new SlotError(
        "signed-boot",
        `slot ${booted} boots a signed UKI (${mine!.file}); this bundle carries a kernel and ` +
          "an initramfs, not UKIs signed with this node's db key, so the firmware would refuse " +
          "the slot: build the bundle with --secure-boot-keys",
      );
    }
    return planInstall(listing, booted, m, args, tries);
  };
  return { running: entryVersion(text), plan };
};

/** What {@link installBundle} needs. */
export interface InstallDeps {
  esp: EspBackend;
  booted: Slot | undefined;
  keys: readonly TrustedKey[];
  machine: Compatible;
  /** How the boot partition is laid out and planned. @default planEspInstall */
  planner?: InstallPlanner;
  /**
   * machine.kernel.args, written into a plain slot's entry (or cmdline.txt).
   * A UKI's line is signed at build and left as it is.
   */
  kernelArgs?: KernelArgs;
  /**
   * Tries the armed slot gets before the loader gives up on it
   * (`machine.upgrade.boot_tries`). The Pi's tryboot always gives one.
   * @default TRIAL_TRIES
   */
  trialTries?: number;
  onEvent?: (e: InstallEvent) => void;
  /** The signed manifest, once verified and before the floor is checked. */
  onManifest?: (m: Manifest) => void;
  /**
   * Install even a version the downgrade floor refuses (below it, equal,
   * unordered), or a bundle that drops a running system extension.
   */
  force?: boolean;
  /** The booted slot's system extensions (names): a bundle must keep them unless forced. */
  runningExtensions?: readonly string[];
  /**
   * The recorded floor (the ESP's or STATE's); the floor in force is the
   * higher of it and the booted image's version (version_floor.ts).
   */
  floor?: string;
  /** Where {@link floor} was recorded, for the refusal's message. @default "state" */
  floorSource?: RecordedSource;
  /** The running image's version, when the booted entry names none (the imager's). */
  running?: string;
  /** No byte for this long refuses the bundle (`stalled`). @default UPGRADE_IDLE_MS */
  idleMs?: number;
  /** The whole upgrade's bound, from the call. @default UPGRADE_DEADLINE_MS */
  deadlineMs?: number;
  /** The clock of the deadlines. @default Date.now */
  now?: () => number;
  /** The size the sender announced (a `--from` Content-Length), checked against the head. */
  expectedSize?: number;
  /**
   * Check a held file (a Secure Boot bundle's UKI) before the ESP opens for
   * writing (upgrade/uki_check.ts). @default refuses: no db to check against
   */
  checkHeld?: (name: string, bytes: Uint8Array, manifest: Manifest) => Promise<void>;
}

/**
 * Verify and install a bundle into the slot not booted, and arm it (on the
 * ESP with {@link InstallDeps.trialTries} tries, by default {@link TRIAL_TRIES}). The head (magic, signed manifest,
 * compatible) and the floor are decided with the ESP only read; a bundle
 * refused there never opens it for writing. Then three sessions: write
 * (receive as `*.new`, sync), read (re-hash them from the medium), write
 * (commit, arm). The
 * stream is bounded by the idle and overall deadlines (bundle/deadline.ts).
 * @throws BundleError for a refused bundle (`stalled` past a deadline),
 *   SlotError for a refused slot (`no-space` for a full ESP).
 */
export async function installBundle(
  source: AsyncIterable<Uint8Array>,
  deps: InstallDeps,
): Promise<
  { manifest: Manifest; plan: InstallSteps; floor: FloorVerdict; extensions: ExtensionVerdict }
> {
  const now = deps.now ?? Date.now;
  const deadlineAt = now() + (deps.deadlineMs ?? UPGRADE_DEADLINE_MS);
  const stream = withDeadlines(source, { idleMs: deps.idleMs, deadlineAt, now });
  const planner = deps.planner ?? planEspInstall;
  const prepared = await deps.esp.read((fs) =>
    planner(fs, deps.booted, deps.kernelArgs, deps.trialTries)
  );
  const running = prepared.running ?? deps.running;
  const opened = await openBundle(stream, { keys: deps.keys, machine: deps.machine });
  const manifest = opened.manifest;
  checkSize(opened.size, deps.expectedSize);
  deps.onManifest?.(manifest);
  const verdict = floorDecision({
    stored: deps.floor,
    storedSource: deps.floorSource,
    running,
    bundle: manifest.version,
    force: deps.force,
  });
  if (verdict.kind === "refused") throw new SlotError(verdict.reason, verdict.message);
  const extensions = extensionDecision({
    running: deps.runningExtensions ?? [],
    bundle: manifest.extensions,
    force: deps.force,
  });
  if (extensions.kind === "refused") throw new SlotError(extensions.reason, extensions.message);
  const plan = prepared.plan(manifest);
  deps.onEvent?.({ phase: "verified", version: manifest.version, kid: opened.kid });
  if (plan.hold?.length) {
    const check = deps.checkHeld ?? noDb;
    await receiveHeld(deps.esp, opened, plan, {
      check: (name, bytes) => check(name, bytes, manifest),
      maxHeldBytes: MAX_UKI_BYTES,
      onEvent: deps.onEvent,
    });
  } else {
    await deps.esp.write((fs) => receiveInto(fs, opened, plan, deps.onEvent));
  }
  await verifyReceived(deps.esp, plan);
  deps.onEvent?.({ phase: "written", slot: plan.target });
  await deps.esp.write(async (fs) => {
    await runSteps(fs, plan.commit);
    await runSteps(fs, plan.arm);
  });
  deps.onEvent?.({ phase: "armed", slot: plan.target, entry: plan.armedAs });
  return { manifest, plan, floor: verdict, extensions };
}

/**
 * Re-hash the received `*.new` files from a fresh read-only mount; on a
 * mismatch remove them and refuse, the target's previous image and entry
 * untouched (nothing of it changed yet).
 * @throws SlotError verify-failed.
 */
async function verifyReceived(esp: EspBackend, plan: InstallSteps): Promise<void> {
  try {
    await esp.read((fs) => runSteps(fs, plan.verify));
  } catch (e) {
    if (!(e instanceof SlotError && e.reason === "verify-failed")) throw e;
    await esp.write((fs) => removeReceived(fs, plan)).catch(() => {});
    throw new SlotError(
      "verify-failed",
      `${e.message.replace(/ \(verify-failed\)$/, "")}; nothing armed, slot ${plan.target}'s ` +
        "previous image and entry are kept, the received *.new files removed",
    );
  }
}

/** Bless the booted slot (drop its boot counter); false when it already was. */
export async function blessBooted(esp: EspBackend, booted: Slot): Promise<boolean> {
  const steps = planBless(await esp.read(readListing), booted);
  if (steps.length === 0) return false;
  await esp.write((fs) => runSteps(fs, steps));
  return true;
}

/** Mark the booted trial bad (`+0`) so the other slot boots next; false when not a trial. */
export async function markBootedBad(esp: EspBackend, booted: Slot): Promise<boolean> {
  const listing = await esp.read(readListing);
  // Booted on its last try (`+0`, e.g. with `boot_tries: 1`): nothing to rename, the loader
  // already sorts it last, but the trial failed all the same and the node must reboot.
  if (bootedOnLastTry(listing, booted)) return true;
  const steps = planMarkBad(listing, booted);
  if (steps.length === 0) return false;
  await esp.write((fs) => runSteps(fs, steps));
  return true;
}

/**
 * Make the other slot boot next (it must hold a blessed image).
 * @throws SlotError nothing-to-roll-back or slot-bad.
 */
export async function rollbackSlot(esp: EspBackend, booted: Slot | undefined): Promise<Slot> {
  const { listing, texts } = await esp.read(async (fs) => {
    const listing = await readListing(fs);
    const texts = new Map<string, string>();
    for (const e of listing.entries) {
      texts.set(e.file, await fs.readText(`${ENTRIES_DIR}/${e.file}`));
    }
    return { listing, texts };
  });
  const plan = planRollback(listing, booted, (e) => texts.get(e.file)!);
  await esp.write((fs) => runSteps(fs, plan.steps));
  return plan.target;
}

function noDb(name: string): Promise<void> {
  return Promise.reject(
    new BundleError(
      "untrusted-uki",
      `${name}: this node has no Secure Boot db to check it against`,
    ),
  );
}
