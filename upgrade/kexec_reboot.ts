/**
 * The kexec reboot: at the start of the shutdown sequence (the API still
 * answers, the ESP is reachable) it reads the entry the loader would boot
 * next from the ESP (kexec_plan.ts), stages its kernel, initramfs and
 * command line with kexec_file_load, and only then does the loader's
 * boot-counter rename on the ESP; at the end of the sequence the shutdown
 * boots the staged image with reboot(LINUX_REBOOT_CMD_KEXEC)
 * (boot/shutdown.ts). Any error on the way (no entry, kexec_file_load
 * refused: ENOSYS on a kernel without CONFIG_KEXEC_FILE, EPERM/EKEYREJECTED
 * under lockdown, a failed rename) unloads what was staged and the node
 * reboots cold, reported as event `power kexec fallback`.
 */
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";
import type { EspBackend } from "../platform/esp/mod.ts";
import type { KmodBackend } from "../platform/kmod/mod.ts";
import type { RebootMode } from "../api/server/mod.ts";
import { ENTRIES_DIR } from "./entries.ts";
import { type KexecPlan, planKexec } from "./kexec_plan.ts";
import { readListing, runSteps } from "./slot_writer.ts";

/** What {@link KexecReboot} needs. */
export interface KexecRebootDeps {
  esp: EspBackend;
  kmod: Pick<KmodBackend, "kexecLoad" | "kexecUnload">;
  events: Pick<EventBus, "emit">;
  logger: Logger;
}

/** See the module doc. One per node: the first reboot request's mode counts. */
export class KexecReboot {
  #mode: RebootMode | undefined;
  constructor(private readonly deps: KexecRebootDeps) {}

  /** Record how the coming reboot boots (the first request wins; undefined is `default`). */
  request(mode: RebootMode | undefined): void {
    this.#mode ??= mode ?? "default";
  }

  /** Whether the coming reboot asked for kexec. */
  get wanted(): boolean {
    return this.#mode === "kexec";
  }

  /**
   * Stage the next entry and do its counter rename. True when the shutdown
   * should end in a kexec; false (after reporting why) for a cold reboot.
   * Never throws.
   */
  async prepare(): Promise<boolean> {
    if (!this.wanted) return false;
    const t0 = performance.now();
    let plan: KexecPlan | undefined;
    try {
      plan = await this.#stage();
      if (plan.steps.length > 0) await this.#rename(plan);
      const ms = (performance.now() - t0).toFixed(0);
      const message = `kexec staged: ${plan.kernel} from ${plan.entry}` +
        (plan.steps.length ? `, renamed ${plan.renamedTo} as the loader would` : "");
      this.deps.events.emit("power", "kexec", "staged", message, {
        entry: plan.entry,
        renamedTo: plan.renamedTo,
        kernel: plan.kernel,
        ms,
      });
      this.deps.logger.info("power", message, { cmdline: plan.cmdline, ms });
      return true;
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      const message = `kexec not possible (${error}): rebooting cold`;
      this.deps.events.emit("power", "kexec", "fallback", message, { error });
      this.deps.logger.warn("power", message, { entry: plan?.entry ?? "" });
      return false;
    }
  }

  /** Read the entries, plan, and kexec_file_load while the ESP is mounted. */
  #stage(): Promise<KexecPlan> {
    return this.deps.esp.read(async (fs) => {
      const { entries } = await readListing(fs);
      const texts = new Map<string, string>();
      for (const e of entries) texts.set(e.file, await fs.readText(`${ENTRIES_DIR}/${e.file}`));
      const plan = planKexec(entries, (e) => texts.get(e.file) ?? "");
      await this.deps.kmod.kexecLoad({
        kernel: fs.hostPath(plan.kernel),
        ...(plan.initramfs ? { initramfs: fs.hostPath(plan.initramfs) } : {}),
        cmdline: plan.cmdline,
      });
      return plan;
    });
  }

  /** The loader's rename; on failure the staged image is dropped (the loader counts instead). */
  async #rename(plan: KexecPlan): Promise<void> {
    try {
      await this.deps.esp.write((fs) => runSteps(fs, plan.steps));
    } catch (e) {
      await this.deps.kmod.kexecUnload().catch(() => {});
      throw new Error(`renaming ${plan.entry} to ${plan.renamedTo}: ${(e as Error).message}`);
    }
  }
}
