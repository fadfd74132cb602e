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
import { type EncryptedStateOpener, runLateConfig } from "./late_config.ts";
import type { Machined } from "../../core/mod.ts";

/**
 * What the late sources hold while they look at the disks: the API's maintenance gate
 * (api/host's NodeMaintenanceGate satisfies it), so an insecure ApplyConfiguration waits
 * until STATE has been checked. Declared here so the keeper does not reach up to the API.
 */
export interface LateConfigGate {
  /** Holds insecure applies until `settled` (bounded by the gate). */
  holdUntil(settled: Promise<unknown>): void;
}

/** Starts looking for a config on a CIDATA volume, then at the command line's URL. */
export function startLateConfig(o: {
  machined: Machined;
  keeper: ConfigKeeper;
  cmdline: ReadonlyMap<string, string>;
  mount: MountBackend;
  gate: LateConfigGate;
  /** The fetch of `machined.config=https://…` (pki's trusted fetch on a node). */
  fetch?: typeof fetch;
  /** Opens a STATE holding LUKS2 before any config (the block domain's StateBootOpener). */
  encryptedState?: EncryptedStateOpener;
  /** Disk discovery's first full scan is in the store: STATE is then found or absent. */
  disksScanned?: Promise<void>;
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
    ...(o.fetch ? { fetch: o.fetch } : {}),
    ...(o.encryptedState ? { encryptedState: o.encryptedState } : {}),
    ...(o.disksScanned ? { disksScanned: o.disksScanned } : {}),
  }).catch((e) => o.machined.logger.error("config", "late config sources failed", { error: e }));
}
