/**
 * A sequence is an ordered list of phases; a phase runs its tasks concurrently
 * and finishes when all have. Every phase and task start, finish and failure is
 * an event, so boot and shutdown progress is data (`machinectl events`).
 * A failing required task stops the sequence with a {@link SequenceError};
 * an optional one is reported and the sequence goes on.
 */
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";

/** One unit of work. */
export interface Task {
  readonly name: string;
  /** Failure is reported but does not stop the sequence. @default false */
  readonly optional?: boolean;
  run(signal: AbortSignal): Promise<void>;
}

/** Tasks that run together. */
export interface Phase {
  readonly name: string;
  readonly tasks: readonly Task[];
}

/** A required task failed; carries which one and why. */
export class SequenceError extends Error {
  override name = "SequenceError";
  constructor(
    readonly sequence: string,
    readonly phase: string,
    readonly task: string,
    cause: unknown,
  ) {
    super(
      `${sequence}: task "${task}" in phase "${phase}" failed: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
  }
}

/** Shorthand for a task. */
export function task(
  name: string,
  run: (signal: AbortSignal) => Promise<void> | void,
  options: { optional?: boolean } = {},
): Task {
  return { name, optional: options.optional, run: async (signal) => await run(signal) };
}

/**
 * Runs `phases` in order.
 * @throws SequenceError when a required task fails (after its phase's other tasks settle).
 */
export async function runSequence(
  sequence: string,
  phases: readonly Phase[],
  deps: { events: EventBus; logger: Logger; signal?: AbortSignal },
): Promise<void> {
  const signal = deps.signal ?? new AbortController().signal;
  deps.events.emit("phase", sequence, "started", `${sequence} sequence started`);
  for (const phase of phases) {
    if (phase.tasks.length === 0) continue;
    const started = performance.now();
    deps.events.emit("phase", phase.name, "started", `${sequence}: phase ${phase.name}`);
    const results = await Promise.allSettled(phase.tasks.map(async (t) => {
      const t0 = performance.now();
      deps.events.emit("task", t.name, "started", "");
      try {
        await t.run(signal);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        deps.events.emit("task", t.name, "failed", message);
        deps.logger.warn(sequence, `task ${t.name} failed${t.optional ? " (optional)" : ""}`, {
          error: message,
        });
        throw e;
      }
      deps.events.emit("task", t.name, "done", "", {
        ms: (performance.now() - t0).toFixed(1),
      });
    }));
    const failed = results.findIndex((r, i) => r.status === "rejected" && !phase.tasks[i].optional);
    const ms = (performance.now() - started).toFixed(1);
    if (failed >= 0) {
      deps.events.emit("phase", phase.name, "failed", "", { ms });
      throw new SequenceError(
        sequence,
        phase.name,
        phase.tasks[failed].name,
        (results[failed] as PromiseRejectedResult).reason,
      );
    }
    deps.events.emit("phase", phase.name, "done", "", { ms });
    deps.logger.info(sequence, `phase ${phase.name} done`, { ms });
  }
  deps.events.emit("phase", sequence, "done", `${sequence} sequence done`);
}
