/**
 * The node's {@link BootCmdlineBackend}: the booted slot's loader entry on the ESP. Reading
 * opens the ESP read-only; a write opens one read-write session only when the line changes,
 * re-reads the entry there and runs {@link planBootedArgs}'s three steps (write beside, rename
 * over, sync), so nothing else of the booted slot is ever written. On a Raspberry Pi the
 * medium is the boot FAT and the line is the booted slot's cmdline.txt, planned the same way
 * by {@link planPiBootedArgs}.
 * @module
 */
import type { BootCmdlineBackend, NextBoot } from "../controllers/kernel/mod.ts";
import type { KernelArgs } from "../config/mod.ts";
import type { EspBackend, EspFiles } from "../platform/esp/mod.ts";
import { RPI3_BOARD } from "../bundle/mod.ts";
import { ENTRIES_DIR, type Slot } from "./entries.ts";
import { type BootedArgsDecision, planBootedArgs } from "./booted_args_plan.ts";
import { readListing, runSteps } from "./slot_writer.ts";
import { planPiBootedArgs } from "./pi_booted_args.ts";
import type { PlanStep } from "./slot_plan.ts";
import { piSlotPaths } from "../layout/mod.ts";

/** What {@link EspBootCmdline} needs. */
export interface EspBootCmdlineDeps {
  esp: EspBackend;
  /** The booted slot (machined.slot= on /proc/cmdline); undefined outside a slot boot. */
  booted: () => Promise<Slot | undefined>;
  /** The image's board; a Pi keeps its line in cmdline.txt. @default a UEFI PC */
  board?: () => Promise<string>;
}

/** See the module doc. */
export class EspBootCmdline implements BootCmdlineBackend {
  constructor(private readonly deps: EspBootCmdlineDeps) {}

  async next(): Promise<NextBoot> {
    return await this.#decide({ add: [], remove: [] }, false);
  }

  async write(args: KernelArgs): Promise<NextBoot> {
    return await this.#decide(args, true);
  }

  async #decide(args: KernelArgs, write: boolean): Promise<NextBoot> {
    const board = (await this.deps.board?.()) ?? "";
    const slot = await this.deps.booted();
    if (!slot) {
      return {
        kind: "none",
        reason: "not booted from a slot (no machined.slot= on /proc/cmdline): there is no " +
          "loader entry to write the args into",
      };
    }
    if (board === RPI3_BOARD) {
      const p = await this.#planAndRun(
        (fs) => fs.readText(piSlotPaths(slot).cmdline).then((t) => planPiBootedArgs(slot, t, args)),
        (p) => p.steps,
        write,
      );
      return { kind: "entry", slot, file: p.path.slice(1), cmdline: p.after };
    }
    const d = await this.#planAndRun(
      (fs) => decide(fs, slot, args),
      (d) => d.kind === "entry" ? d.plan.steps : [],
      write,
    );
    if (d.kind === "uki") return d;
    return { kind: "entry", slot, file: d.plan.file, cmdline: d.plan.after };
  }

  /**
   * Plans from a read-only look at the medium; when writing and the plan changes something,
   * plans again inside one write session, from what the medium holds then, and runs that.
   */
  async #planAndRun<P>(
    plan: (fs: EspFiles) => Promise<P>,
    steps: (p: P) => PlanStep[],
    write: boolean,
  ): Promise<P> {
    const looked = await this.deps.esp.read(plan);
    if (!write || steps(looked).length === 0) return looked;
    return await this.deps.esp.write(async (fs) => {
      const again = await plan(fs);
      await runSteps(fs, steps(again));
      return again;
    });
  }
}

async function decide(fs: EspFiles, slot: Slot, args: KernelArgs): Promise<BootedArgsDecision> {
  const listing = await readListing(fs);
  const texts = new Map<string, string>();
  for (const e of listing.entries.filter((e) => e.name.slot === slot)) {
    texts.set(e.file, await fs.readText(`${ENTRIES_DIR}/${e.file}`));
  }
  return planBootedArgs(listing, slot, (f) => texts.get(f) ?? "", args);
}
