/**
 * The shutdown sequence, shared by SIGTERM/SIGINT/Ctrl-Alt-Del and the Reboot
 * and Shutdown RPCs: stop services in reverse dependency order (while the API
 * still answers, so a grace-period kill is visible), stop apid, stop the
 * controllers, close what they leave (service log files, DHCP leases), sync,
 * unmount in reverse order (detaching what stays busy), and finally reboot(2).
 * Every step is best effort and has a deadline ({@link SHUTDOWN_DEADLINES_MS}):
 * a failing or hung step is reported (`failed`, or `overran`) and the machine
 * still syncs and goes down.
 */
import type { MountBackend } from "../platform/mount/mod.ts";
import type { PowerBackend } from "../platform/power/mod.ts";
import type { Machined } from "../node/machined.ts";
import type { Clock } from "../runtime/clock.ts";
import { runSequence, task } from "./sequence.ts";

/** The shutdown steps, in order. */
export type ShutdownStep =
  | "stopServices"
  | "stopApi"
  | "stopControllers"
  | "afterControllers"
  | "sync"
  | "unmount"
  | "syncAgain";

/**
 * How long each step may take before it is abandoned. stopServices covers the
 * services' grace periods (SIGTERM, then SIGKILL) in reverse dependency order;
 * a hung sync is abandoned too, since reboot(2) must still be reached.
 */
export const SHUTDOWN_DEADLINES_MS: Readonly<Record<ShutdownStep, number>> = {
  stopServices: 90_000,
  stopApi: 10_000,
  stopControllers: 15_000,
  afterControllers: 15_000,
  sync: 30_000,
  unmount: 30_000,
  syncAgain: 30_000,
};

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
  try {
    await runSequence(action, [
      {
        name: "stopServices",
        tasks: deps.stopServices
          ? [task("stopServices", deps.stopServices, step("stopServices"))]
          : [],
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
        tasks: [task("unmount", async (signal) => {
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
        }, step("unmount"))],
      },
      { name: "syncAgain", tasks: [task("sync", () => deps.power.sync(), step("syncAgain"))] },
    ], { events: machined.events, logger: machined.logger, clock: deps.clock });
  } catch (e) {
    machined.logger.error("shutdown", "sequence failed; going down anyway", { error: e });
  }
  if (deps.dryRun) return;
  machined.logger.info("shutdown", action === "reboot" ? "rebooting now" : "powering off now");
  if (action === "reboot") await deps.power.restart();
  else await deps.power.powerOff();
}
