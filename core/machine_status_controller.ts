/**
 * MachineStatusController: turns the sequencer's stage, the config status and
 * controller health into the MachineStatus resource (stage, ready, unmet conditions).
 * Inputs: ConfigStatus, ControllerStatus. Output: MachineStatus.
 */
import {
  CONFIG_STATUS,
  type ConfigStatusSpec,
  type ControllerStatusSpec,
  MACHINE_STATUS,
  MACHINE_STATUS_ID,
  type MachineController,
  type MachineStage,
  type MachineStatusSpec,
  type UnmetCondition,
} from "../resources/mod.ts";
import type { ReconcileContext } from "../runtime/mod.ts";
import type { ResourceSpecs } from "../resources/mod.ts";
import type { StageCell } from "./stage.ts";

/** The controller's name, so the runtime can be asked to re-run it. */
export const MACHINE_STATUS_CONTROLLER = "runtime.MachineStatusController";

/**
 * Builds the controller. `stage` is the sequencer's cell; `controllers` reads the
 * runtime's health directly rather than through ControllerStatus resources,
 * because every cycle of this controller changes its own ControllerStatus and
 * would re-trigger it forever (machined re-runs it when health changes).
 */
export function machineStatusController(
  deps: {
    stage: StageCell;
    pid1: boolean;
    mode: "node" | "dev";
    /** Conditions raised outside the controllers. @default none */
    conditions?: () => readonly UnmetCondition[];
    controllers: () => ReadonlyArray<{ name: string; spec: ControllerStatusSpec }>;
  },
): MachineController {
  return {
    name: MACHINE_STATUS_CONTROLLER,
    inputs: [{ type: CONFIG_STATUS, kind: "weak" }],
    outputs: [{ type: MACHINE_STATUS, kind: "exclusive" }],
    async reconcile(ctx: ReconcileContext<ResourceSpecs>) {
      const config = ctx.find(CONFIG_STATUS, "config", "machine")?.spec;
      const controllers = deps.controllers().filter((c) => c.name !== MACHINE_STATUS_CONTROLLER);
      await ctx.apply(
        { type: MACHINE_STATUS, namespace: "runtime", id: MACHINE_STATUS_ID },
        machineStatus(deps.stage.get(), config, controllers, {
          ...deps,
          extra: deps.conditions?.() ?? [],
        }),
      );
    },
  };
}

/** Pure: the MachineStatus for a stage, config status and controller health. */
export function machineStatus(
  stage: MachineStage,
  config: ConfigStatusSpec | undefined,
  controllers: ReadonlyArray<{ name: string; spec: ControllerStatusSpec }>,
  facts: { pid1: boolean; mode: "node" | "dev"; extra?: readonly UnmetCondition[] },
): MachineStatusSpec {
  const unmet: UnmetCondition[] = [];
  if (!config) unmet.push({ name: "config", reason: "no machine config loaded yet" });
  else if (config.state !== "valid") {
    const first = config.errors[0];
    unmet.push({
      name: "config",
      reason: config.state === "missing"
        ? `no machine config found (${config.source})`
        : `${config.errors.length} error(s) in ${config.source}` +
          (first ? `: ${first.path} (${first.line}:${first.column}) ${first.message}` : ""),
    });
  }
  for (const c of controllers) {
    if (c.spec.consecutiveFailures > 0 && c.spec.state !== "stopped") {
      unmet.push({ name: `controller/${c.name}`, reason: c.spec.lastError || "failing" });
    }
  }
  unmet.push(...(facts.extra ?? []));
  if (stage === "booting") unmet.push({ name: "boot", reason: "boot sequence still running" });
  return {
    stage,
    ready: stage === "running" && unmet.length === 0,
    unmetConditions: unmet,
    pid1: facts.pid1,
    mode: facts.mode,
  };
}
