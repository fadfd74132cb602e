/**
 * The machined core: the store, the controller runtime, the event bus, the stage and
 * condition cells, the log and the metrics registry, wired into one {@link Machined}.
 * Every domain is handed this core (config/keeper, api/host, upgrade, install, reset,
 * boot's shutdown), so it lives on a floor below them; node/ composes it with the
 * domains and is imported by nobody below it.
 *
 * @example
 * ```ts
 * import { Machined } from "./core/mod.ts";
 * const machined = new Machined({ mode: "dev", pid1: false });
 * machined.start();
 * machined.stage.set("running");
 * await machined.stop();
 * ```
 * @module
 */
export { Machined, type MachinedOptions, type RunMode } from "./machined.ts";
export { StageCell } from "./stage.ts";
export { ConditionCell } from "./conditions.ts";
export { MACHINE_STATUS_CONTROLLER } from "./machine_status_controller.ts";
