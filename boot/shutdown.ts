/**
 * The shutdown sequence, shared by SIGTERM/SIGINT/Ctrl-Alt-Del and the Reboot
 * and Shutdown RPCs: stop services in reverse dependency order (while the API
 * still answers, so a grace-period kill is visible), stop apid, stop the
 * controllers, close what they leave (service log files, DHCP leases), sync, unmount in reverse order (detaching what stays busy), and
 * finally reboot(2). Every step is best effort: a failing step is reported and
 * the machine still goes down.
 */
import type { MountBackend } from "../platform/mount/mod.ts";
import type { PowerBackend } from "../platform/power/mod.ts";
import type { Machined } from "../node/machined.ts";
import { runSequence, task } from "./sequence.ts";

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
  const optional = { optional: true };
  try {
    await runSequence(action, [
      {
        name: "stopServices",
        tasks: deps.stopServices ? [task("stopServices", deps.stopServices, optional)] : [],
      },
      { name: "stopApi", tasks: deps.stopApi ? [task("stopApi", deps.stopApi, optional)] : [] },
      {
        name: "stopControllers",
        tasks: [task("stopControllers", () => machined.stop(), optional)],
      },
      {
        // Closes what still holds the volumes (service log files) and sends DHCP releases.
        name: "afterControllers",
        tasks: deps.afterControllers
          ? [task("afterControllers", deps.afterControllers, optional)]
          : [],
      },
      { name: "sync", tasks: [task("sync", () => deps.power.sync(), optional)] },
      {
        name: "unmount",
        tasks: [task("unmount", async () => {
          const order = unmountOrder(await deps.mount.mounts(), deps.keepMounted);
          for (const target of order) {
            try {
              const how = await deps.mount.unmount(target, { detach: true });
              machined.logger.info("shutdown", `unmounted ${target}`, { how });
            } catch (e) {
              machined.logger.warn("shutdown", `cannot unmount ${target}`, { error: e });
            }
          }
        }, optional)],
      },
      { name: "syncAgain", tasks: [task("sync", () => deps.power.sync(), optional)] },
    ], { events: machined.events, logger: machined.logger });
  } catch (e) {
    machined.logger.error("shutdown", "sequence failed; going down anyway", { error: e });
  }
  if (deps.dryRun) return;
  machined.logger.info("shutdown", action === "reboot" ? "rebooting now" : "powering off now");
  if (action === "reboot") await deps.power.restart();
  else await deps.power.powerOff();
}
