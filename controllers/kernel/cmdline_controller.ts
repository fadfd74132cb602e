/**
 * KernelCmdlineController: writes `machine.kernel.args` into the line the booted slot boots
 * next (a plain slot's loader entry `options`, through {@link BootCmdlineBackend}), and
 * publishes KernelCmdlineStatus: the booted line (/proc/cmdline, read through platform/procfs),
 * the desired args, the next line, and what is pending with the reason. Under Secure Boot the
 * line is signed inside the UKI: nothing is written and the status says the args wait for the
 * next signed upgrade bundle. Inputs: MachineConfig, UpgradeStatus (published once the ESP is
 * found, and after each upgrade). Output: KernelCmdlineStatus.
 * @module
 */
import { type KernelArgs, kernelArgsState } from "../../config/mod.ts";
import type { EventBus } from "../../events/mod.ts";
import type { ProcBackend } from "../../platform/procfs/mod.ts";
import {
  KERNEL_CMDLINE_STATUS,
  KERNEL_CMDLINE_STATUS_ID,
  type KernelCmdlineStatusSpec,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineController,
  type ResourceSpecs,
  UPGRADE_STATUS,
  UPGRADE_STATUS_ID,
} from "../../resources/mod.ts";
import type { ReconcileContext } from "../../runtime/mod.ts";
import type { BootCmdlineBackend, NextBoot } from "./boot_cmdline_backend.ts";

const NAME = "kernel.KernelCmdlineController";
/** A failed read or write of the next boot's line is retried after this long. */
export const CMDLINE_RETRY_MS = 30_000;

/** What the controller needs. */
export interface CmdlineControllerDeps {
  /** /proc (the booted line is its `cmdline`). */
  proc: ProcBackend;
  boot: BootCmdlineBackend;
  events?: EventBus;
}

/** Builds the controller. */
export function cmdlineController(deps: CmdlineControllerDeps): MachineController {
  return new KernelCmdlineController(deps);
}

/** See the module doc. */
export class KernelCmdlineController implements MachineController {
  readonly name = NAME;
  readonly inputs = [
    { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
    { type: UPGRADE_STATUS, kind: "weak", namespace: "runtime", id: UPGRADE_STATUS_ID },
  ] as const;
  readonly outputs = [{ type: KERNEL_CMDLINE_STATUS, kind: "exclusive" }] as const;

  constructor(private readonly deps: CmdlineControllerDeps) {}

  async reconcile(ctx: ReconcileContext<ResourceSpecs>): Promise<void> {
    const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
    const args: KernelArgs = config?.machine.kernel.args ?? { add: [], remove: [] };
    const booted = (await this.deps.proc.readText("cmdline").catch(() => "")).trim();
    let next: NextBoot | undefined;
    let error = "";
    try {
      const before = await this.deps.boot.next();
      // No config yet: nothing is written (a node without config keeps its image's line).
      next = config ? await this.deps.boot.write(args) : before;
      if (before.kind === "entry" && next.kind === "entry" && before.cmdline !== next.cmdline) {
        this.deps.events?.emit(
          "controller",
          NAME,
          "cmdline-written",
          `Wrote machine.kernel.args into slot ${next.slot}'s loader entry ${next.file}: ${next.cmdline}`,
        );
      }
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
      ctx.requeueAfter(CMDLINE_RETRY_MS);
    }
    await ctx.apply(
      { type: KERNEL_CMDLINE_STATUS, namespace: "kernel", id: KERNEL_CMDLINE_STATUS_ID },
      cmdlineStatus(args, booted, next, error),
    );
  }
}

/**
 * The status from the desired args, the booted line, the next boot (undefined when it could
 * not be read or written, with `error`). Pure.
 */
export function cmdlineStatus(
  args: KernelArgs,
  booted: string,
  next: NextBoot | undefined,
  error: string,
): KernelCmdlineStatusSpec {
  const { pending } = kernelArgsState(args, booted);
  const base = {
    booted,
    desiredAdd: [...args.add],
    desiredRemove: [...args.remove],
    next: next?.kind === "entry" ? next.cmdline : "",
    pending,
  };
  if (pending.length === 0) return { ...base, state: "booted", reason: "" };
  if (!next) {
    return {
      ...base,
      state: "unwritable",
      reason: `cannot write the booted slot's command line (retried in ${
        CMDLINE_RETRY_MS / 1000
      } s): ${error}`,
    };
  }
  switch (next.kind) {
    case "entry":
      return {
        ...base,
        state: "pending-reboot",
        reason:
          `written into slot ${next.slot}'s loader entry ${next.file}: booted at the next reboot`,
      };
    case "uki":
      return {
        ...base,
        state: "pending-upgrade",
        reason: `slot ${next.slot} boots a signed UKI (${next.file}) whose command line is ` +
          "inside its signature, which the node cannot re-sign: the args take effect with the " +
          "next signed upgrade bundle built with this config (deno task image --config … " +
          "--secure-boot-keys …)",
      };
    case "none":
      return { ...base, state: "unwritable", reason: next.reason };
  }
}
