/**
 * boot/node_main.ts's one call into config/keeper/late_config.ts: plans the late
 * sources from the command line and runs them in the background (PID 1 never
 * waits on the network; a failure is logged, never thrown).
 *
 * @module
 */
import type { MountBackend } from "../../platform/mount/mod.ts";
import { lateConfigPlan } from "./config_sources.ts";
import type { ConfigKeeper } from "./config_keeper.ts";
import { runLateConfig } from "./late_config.ts";
import type { Machined } from "../../node/machined.ts";
import type { NodeMaintenanceGate } from "../../api/host/mod.ts";

/** Starts looking for a config on a CIDATA volume, then at the command line's URL. */
export function startLateConfig(o: {
  machined: Machined;
  keeper: ConfigKeeper;
  cmdline: ReadonlyMap<string, string>;
  mount: MountBackend;
  gate: NodeMaintenanceGate;
}): void {
  const { promise: stateChecked, resolve } = Promise.withResolvers<void>();
  o.gate.holdUntil(stateChecked);
  runLateConfig({
    onStateChecked: () => resolve(),
    machined: o.machined,
    keeper: o.keeper,
    plan: lateConfigPlan(o.cmdline),
    mount: o.mount,
    cidataDir: "/run/machined/cidata",
  }).catch((e) => o.machined.logger.error("config", "late config sources failed", { error: e }));
}
