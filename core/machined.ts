/**
 * The machined core: the store, the controller runtime, the event bus, the
 * stage cell and the log, wired together. Boot (PID 1 or dev) builds one of
 * these, registers the domain controllers, and starts it.
 */
import { EventBus } from "../events/mod.ts";
import { createLogger, type RingLogger } from "../logs/mod.ts";
import { CONTROLLER_STATUS, type MachineController, type ResourceSpecs } from "../resources/mod.ts";
import { type Clock, ControllerRuntime, Store, systemClock } from "../runtime/mod.ts";
import { controllerStatusPublisher } from "./controller_status.ts";
import { MACHINE_STATUS_CONTROLLER, machineStatusController } from "./machine_status_controller.ts";
import { StageCell } from "./stage.ts";
import { ConditionCell } from "./conditions.ts";
import { controllerCycleObserver, MetricsRegistry } from "../metrics/mod.ts";

/** How machined runs: as a node's PID 1, or unprivileged on a laptop. */
export type RunMode = "node" | "dev";

/** Construction options. */
export interface MachinedOptions {
  mode: RunMode;
  pid1: boolean;
  clock?: Clock;
  logger?: RingLogger;
  /** Domain controllers to run besides the core ones. */
  controllers?: readonly MachineController[];
}

/** The running core of a node. */
export class Machined {
  readonly store: Store<ResourceSpecs>;
  readonly runtime: ControllerRuntime<ResourceSpecs>;
  readonly events = new EventBus();
  readonly stage = new StageCell();
  /** Unmet conditions raised outside the controllers (shown in MachineStatus). */
  readonly conditions = new ConditionCell();
  readonly logger: RingLogger;
  /** The clock the store and runtime use (a fake one in tests). */
  readonly clock: Clock;
  /** Prometheus metrics (node_metrics.ts adds the collectors; the API serves them). */
  readonly metrics = new MetricsRegistry();
  readonly mode: RunMode;
  readonly pid1: boolean;
  #unsubscribeStage?: () => void;
  #unsubscribeConditions?: () => void;
  #started = false;

  constructor(options: MachinedOptions) {
    this.mode = options.mode;
    this.pid1 = options.pid1;
    const clock = this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? createLogger();
    this.store = new Store<ResourceSpecs>({ clock });
    const publish = controllerStatusPublisher(this.store, (name) => this.runtime.declaration(name));
    let lastFailures = new Map<string, number>();
    const failing = new Set<string>();
    const cycles = controllerCycleObserver(this.metrics);
    this.runtime = new ControllerRuntime(this.store, {
      clock,
      onStats: (stats) => {
        publish(stats);
        cycles(stats);
        const before = lastFailures.get(stats.name) ?? 0;
        if (stats.failures > before) {
          this.events.emit("controller", stats.name, "failed", stats.lastError ?? "");
        }
        lastFailures = new Map(lastFailures).set(stats.name, stats.failures);
        // Re-run MachineStatus when a controller starts or stops failing.
        const nowFailing = stats.consecutiveFailures > 0 && stats.state !== "stopped";
        if (nowFailing !== failing.has(stats.name) && stats.name !== MACHINE_STATUS_CONTROLLER) {
          if (nowFailing) failing.add(stats.name);
          else failing.delete(stats.name);
          if (this.#started) this.runtime.trigger(MACHINE_STATUS_CONTROLLER);
        }
      },
      logger: (controller, message, fields) => this.logger.info(controller, message, fields),
    });
    this.runtime.register(machineStatusController({
      stage: this.stage,
      pid1: options.pid1,
      mode: options.mode,
      conditions: () => this.conditions.list(),
      controllers: () =>
        this.store.list(CONTROLLER_STATUS).map((r) => ({ name: r.metadata.id, spec: r.spec })),
    }));
    for (const c of options.controllers ?? []) this.runtime.register(c);
  }

  /** Adds domain controllers; only before {@link start}. */
  register(controllers: readonly MachineController[]): void {
    for (const c of controllers) this.runtime.register(c);
  }

  /** Starts the controllers; stage changes re-run MachineStatus. */
  start(): void {
    this.#started = true;
    this.#unsubscribeStage = this.stage.onChange((stage) => {
      this.events.emit("phase", "machine", stage, `machine stage is now ${stage}`);
      this.runtime.trigger(MACHINE_STATUS_CONTROLLER);
    });
    this.#unsubscribeConditions = this.conditions.onChange(() =>
      this.runtime.trigger(MACHINE_STATUS_CONTROLLER)
    );
    this.runtime.start();
  }

  /** Stops the controllers gracefully. */
  async stop(): Promise<void> {
    this.#unsubscribeStage?.();
    this.#unsubscribeConditions?.();
    await this.runtime.stop();
  }
}
