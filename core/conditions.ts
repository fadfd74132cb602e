/**
 * Unmet conditions raised by parts of machined that are not controllers (the
 * API's PKI, for one), for MachineStatus. Setting or clearing one re-runs the
 * MachineStatus controller, as a stage change does.
 */
import type { UnmetCondition } from "../resources/mod.ts";

/** A small observable set of named conditions. */
export class ConditionCell {
  #conditions = new Map<string, string>();
  #listeners = new Set<() => void>();

  /** The conditions, by name. */
  list(): UnmetCondition[] {
    return [...this.#conditions].map(([name, reason]) => ({ name, reason }));
  }

  /** Raises `name` with `reason`, or clears it with `undefined`. */
  set(name: string, reason: string | undefined): void {
    if (this.#conditions.get(name) === reason) return;
    if (reason === undefined) this.#conditions.delete(name);
    else this.#conditions.set(name, reason);
    for (const l of this.#listeners) l();
  }

  /** Calls `listener` on every change; returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
