/**
 * The shutdown sequence, shared by SIGTERM/SIGINT/Ctrl-Alt-Del and the Reboot
 * and Shutdown RPCs: stop services in reverse dependency order (while the API
 * still answers, so a grace-period kill is visible), stop apid, stop the
 * controllers, close what they leave (service log files, DHCP leases), sync,
 * unmount in reverse order (detaching what stays busy), and finally reboot(2).
 * A kexec reboot stages its image first (`kexecLoad`, before anything stops)
 * and ends in reboot(LINUX_REBOOT_CMD_KEXEC); when that fails, a cold reboot.
 * Every step is best effort and has a deadline ({@link SHUTDOWN_DEADLINES_MS}):
 * a failing or hung step is reported (`failed`, or `overran`) and the machine
 * still syncs and goes down.
 */
import type { MountBackend } from "../platform/mount/mod.ts";
import type { PowerBackend } from "../platform/power/mod.ts";
import type { Machined } from "../core/mod.ts";
import type { ResetSequence } from "../reset/mod.ts";
import type { Clock } from "../runtime/mod.ts";
import { type Phase, runSequence, task } from "./sequence.ts";

/** The shutdown steps, in order. */
export type ShutdownStep =
  | "kexecLoad"
  | "stopServices"
  | "stopApi"
  | "stopControllers"
  | "afterControllers"
  | "sync"
  | "unmount"
  | "wipe"
  | "syncAgain";

/**
 * How long each step may take before it is abandoned. stopServices covers the
 * services' grace periods (SIGTERM, then SIGKILL) in reverse dependency order;
 * a hung sync is abandoned too, since reboot(2) must still be reached.
 */
export const SHUTDOWN_DEADLINES_MS: Readonly<Record<ShutdownStep, number>> = {
  kexecLoad: 60_000,
  stopServices: 90_000,
  stopApi: 10_000,
  stopControllers: 15_000,
  afterControllers: 15_000,
  sync: 30_000,
  unmount: 30_000,
  wipe: 120_000,
  syncAgain: 30_000,
};

/** How long a forced stop waits for the killed services to be reaped. */
export const FORCED_STOP_WAIT_MS = 10_000;

/** What ends the sequence. */
export type PowerAction = "reboot" | "poweroff";

/** What the sequence stops and unmounts. */
export interface ShutdownDeps {
  machined: Machined;
  power: PowerBackend;
  mount: MountBackend;
  /** Stops every supervised service (reverse dependency order). */
  stopServices?: () => Promise<void>;
  /** Stops apid and the internal API server. */
  stopApi?: () => Promise<void>;
  /** Runs once the controllers stopped (DHCP releases, closing the supervisor). */
  afterControllers?: () => Promise<void>;
  /** Pseudo filesystems that stay mounted until reboot(2) (/proc, /sys, /dev ...). */
  keepMounted: readonly string[];
  /** Skip reboot(2) (tests). */
  dryRun?: boolean;
  /** Overrides of {@link SHUTDOWN_DEADLINES_MS} (tests). */
  deadlinesMs?: Partial<Record<ShutdownStep, number>>;
  /** The clock deadlines run on. @default systemClock */
  clock?: Clock;
  /** Makes this shutdown a reset. */
  reset?: ResetSequence;
  /**
   * A reboot that may end in kexec: `prepare` stages the image (true) or
   * says to reboot cold (false); see upgrade/kexec_reboot.ts.
   */
  kexec?: { readonly wanted: boolean; prepare(): Promise<boolean> };
}

/** Mount points to unmount, deepest and latest first. Pure. */
export function unmountOrder(
  mounts: ReadonlyArray<{ mountPoint: string; id: number }>,
  keep: readonly string[],
): string[] {
  const kept = new Set(["/", ...keep]);
  return mounts
    .filter((m) => !kept.has(m.mountPoint) && !keep.some((k) => m.mountPoint.startsWith(k + "/")))
    .sort((a, b) => b.id - a.id)
    .map((m) => m.mountPoint);
}

/** Runs the shutdown sequence, then reboots or powers off (unless `dryRun`). */
export async function shutdownNode(action: PowerAction, deps: ShutdownDeps): Promise<void> {
  const { machined } = deps;
  machined.stage.set(action === "reboot" ? "rebooting" : "shuttingDown");
  machined.events.emit("power", action, "started", `${action} requested`);
  const limits = { ...SHUTDOWN_DEADLINES_MS, ...deps.deadlinesMs };
  const step = (name: ShutdownStep) => ({ optional: true, deadlineMs: limits[name] });
  const { reset } = deps;
  const stopServices = reset && deps.stopServices
    ? stopForReset(reset, deps.stopServices, machined)
    : deps.stopServices;
  const stopLimit = reset ? resetStopLimit(reset) : step("stopServices");
  const kexec = action === "reboot" && !reset && deps.kexec?.wanted ? deps.kexec : undefined;
  let kexecStaged = false;
  try {
    await runSequence(
      reset ? `reset-${action}` : action,
      withSteps([
        // Only for a kexec reboot: staged while the API still answers and the ESP is reachable.
        ...(kexec
          ? [{
            name: "kexecLoad",
            tasks: [task("kexecLoad", async () => {
              kexecStaged = await kexec.prepare();
            }, step("kexecLoad"))],
          }]
          : []),
        {
          name: "stopServices",
          tasks: stopServices ? [task("stopServices", stopServices, stopLimit)] : [],
        },
        {
          name: "stopApi",
          tasks: deps.stopApi ? [task("stopApi", deps.stopApi, step("stopApi"))] : [],
        },
        {
          name: "stopControllers",
          tasks: [task("stopControllers", () => machined.stop(), step("stopControllers"))],
        },
        {
          // Closes what still holds the volumes (service log files) and sends DHCP releases.
          name: "afterControllers",
          tasks: deps.afterControllers
            ? [task("afterControllers", deps.afterControllers, step("afterControllers"))]
            : [],
        },
        { name: "sync", tasks: [task("sync", () => deps.power.sync(), step("sync"))] },
        {
          name: "unmount",
          tasks: [task("unmount", (signal) => unmountAll(deps, signal), step("unmount"))],
        },
        // Only in a reset: the volumes are unmounted (or detached) by now.
        ...(reset
          ? [{ name: "wipe", tasks: [task("wipe", () => reset.wipe(), step("wipe"))] }]
          : []),
        { name: "syncAgain", tasks: [task("sync", () => deps.power.sync(), step("syncAgain"))] },
      ], reset?.onStep),
      { events: machined.events, logger: machined.logger, clock: deps.clock },
    );
  } catch (e) {
    machined.logger.error("shutdown", "sequence failed; going down anyway", { error: e });
  }
  if (deps.dryRun) return;
  if (kexecStaged) await kexecOrFallBack(deps.power, machined);
  machined.logger.info("shutdown", action === "reboot" ? "rebooting now" : "powering off now");
  if (action === "reboot") await deps.power.restart();
  else await deps.power.powerOff();
}

/**
 * A reset's service stop waits out the graceful deadline (none when forced), the forced
 * stop's wait, and 5 s of slack.
 */
function resetStopLimit(reset: ResetSequence): { optional: boolean; deadlineMs: number } {
  return {
    optional: true,
    deadlineMs: (reset.mode === "graceful" ? reset.gracefulDeadlineMs : 0) +
      FORCED_STOP_WAIT_MS + 5_000,
  };
}

/** Unmounts (detaching when busy) all but the kept mounts, until `signal` says time is up. */
async function unmountAll(deps: ShutdownDeps, signal: AbortSignal): Promise<void> {
  const { machined } = deps;
  const order = unmountOrder(await deps.mount.mounts(), deps.keepMounted);
  for (const target of order) {
    if (signal.aborted) break; // overran: the rest is left to reboot(2)
    try {
      const how = await deps.mount.unmount(target, { detach: true });
      machined.logger.info("shutdown", `unmounted ${target}`, { how });
    } catch (e) {
      machined.logger.warn("shutdown", `cannot unmount ${target}`, { error: e });
    }
  }
}

/** reboot(KEXEC); returns (after reporting it) only when that failed. */
async function kexecOrFallBack(power: PowerBackend, machined: Machined): Promise<void> {
  machined.logger.info("shutdown", "rebooting now (kexec)");
  try {
    await power.kexec();
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    machined.events.emit("power", "kexec", "fallback", `kexec failed (${error}): rebooting cold`, {
      error,
    });
    machined.logger.error("shutdown", "kexec failed: rebooting cold", { error });
  }
}

/** Graceful until the deadline, then (or at once when forced) kill everything. */
function stopForReset(
  reset: ResetSequence,
  stop: () => Promise<void>,
  machined: Machined,
): () => Promise<void> {
  return async () => {
    const stopping = stop().catch((e) => {
      machined.logger.warn("reset", "stopping services failed", { error: e });
    });
    const within = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), ms);
        stopping.then(() => {
          clearTimeout(t);
          resolve(true);
        });
      });
    if (reset.mode === "graceful") {
      if (await within(reset.gracefulDeadlineMs)) return;
      machined.events.emit("power", "reset", "forced", "graceful stop overran: killing", {
        deadlineMs: String(reset.gracefulDeadlineMs),
      });
    }
    await reset.forceKill().catch((e) => {
      machined.logger.warn("reset", "cannot kill the services", { error: e });
    });
    await within(FORCED_STOP_WAIT_MS);
  };
}

/** Reports each phase as it starts (a reset's progress). Pure wrapper. */
function withSteps(phases: Phase[], onStep?: (phase: string) => void): Phase[] {
  if (!onStep) return phases;
  return phases.map((p) => ({
    ...p,
    tasks: p.tasks.map((t, i) => ({
      ...t,
      run: (signal: AbortSignal) => {
        if (i === 0) onStep(p.name);
        return t.run(signal);
      },
    })),
  }));
}
