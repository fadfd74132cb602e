/**
 * The node's lifecycle stage as set by the sequencer (booting → running, or
 * maintenance; then rebooting / shuttingDown). MachineStatusController reads it;
 * setting it re-runs that controller.
 */
import type { MachineStage } from "../resources/mod.ts";

/** A small observable cell holding the current stage. */
export class StageCell {
  #stage: MachineStage = "booting";
  #listeners = new Set<(stage: MachineStage) => void>();

  get(): MachineStage {
    return this.#stage;
  }

  set(stage: MachineStage): void {
    if (stage === this.#stage) return;
    this.#stage = stage;
    for (const l of this.#listeners) l(stage);
  }

  /** Calls `listener` on every change; returns an unsubscribe function. */
  onChange(listener: (stage: MachineStage) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
