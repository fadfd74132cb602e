/**
 * A sequence is an ordered list of phases; a phase runs its tasks concurrently
 * and finishes when all have. Every phase and task start, finish and failure is
 * an event, so boot and shutdown progress is data (`machinectl events`).
 * A failing required task stops the sequence with a {@link SequenceError};
 * an optional one is reported and the sequence goes on.
 *
 * Every task has a deadline ({@link DEFAULT_TASK_DEADLINE_MS} unless it sets
 * its own): PID 1 never hangs, so a task that overruns (an unkillable service,
 * a stuck unmount) is reported with an `overran` event, its signal is aborted,
 * and it counts as failed — an optional one is left behind and the sequence
 * goes on; a required one fails the sequence (the boot's fatal path).
 */
import type { EventBus } from "../events/mod.ts";
import type { Logger } from "../logs/mod.ts";
import { type Clock, systemClock } from "../runtime/mod.ts";

/** A task's deadline when it sets none. */
export const DEFAULT_TASK_DEADLINE_MS = 120_000;

/** One unit of work. */
export interface Task {
  readonly name: string;
  /** Failure is reported but does not stop the sequence. @default false */
  readonly optional?: boolean;
  /** How long the task may run before it counts as failed. @default DEFAULT_TASK_DEADLINE_MS */
  readonly deadlineMs?: number;
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

/** A task ran past its deadline; it is abandoned (its signal aborted), never awaited again. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
  constructor(readonly task: string, readonly deadlineMs: number) {
    super(`task "${task}" overran its deadline of ${deadlineMs} ms`);
  }
}

/** Shorthand for a task. */
export function task(
  name: string,
  run: (signal: AbortSignal) => Promise<void> | void,
  options: { optional?: boolean; deadlineMs?: number } = {},
): Task {
  return {
    name,
    optional: options.optional,
    deadlineMs: options.deadlineMs,
    run: async (signal) => await run(signal),
  };
}

/** What a sequence reports to, and the clock its deadlines run on. */
export interface SequenceDeps {
  events: EventBus;
  logger: Logger;
  signal?: AbortSignal;
  /** Deadlines sleep on this clock. @default systemClock */
  clock?: Clock;
}

/**
 * Runs `phases` in order.
 * @throws SequenceError when a required task fails (after its phase's other tasks settle).
 */
export async function runSequence(
  sequence: string,
  phases: readonly Phase[],
  deps: SequenceDeps,
): Promise<void> {
  const signal = deps.signal ?? new AbortController().signal;
  const clock = deps.clock ?? systemClock;
  deps.events.emit("phase", sequence, "started", `${sequence} sequence started`);
  for (const phase of phases) {
    if (phase.tasks.length === 0) continue;
    const started = performance.now();
    deps.events.emit("phase", phase.name, "started", `${sequence}: phase ${phase.name}`);
    const results = await Promise.allSettled(phase.tasks.map(async (t) => {
      const t0 = performance.now();
      deps.events.emit("task", t.name, "started", "");
      try {
        await runWithDeadline(t, signal, clock, deps);
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

/**
 * Runs `t` until it settles or its deadline passes, whichever is first. On an
 * overrun the task's own signal is aborted and an `overran` event is emitted;
 * the task's promise is left behind (nothing can force a hung syscall back).
 * @throws DeadlineError when the deadline passes first.
 */
async function runWithDeadline(
  t: Task,
  sequenceSignal: AbortSignal,
  clock: Clock,
  deps: SequenceDeps,
): Promise<void> {
  const deadlineMs = t.deadlineMs ?? DEFAULT_TASK_DEADLINE_MS;
  const own = new AbortController();
  const timer = new AbortController();
  const onAbort = () => own.abort(sequenceSignal.reason);
  sequenceSignal.addEventListener("abort", onAbort, { once: true });
  const overrun = clock.sleep(deadlineMs, timer.signal).then(
    () => {
      const error = new DeadlineError(t.name, deadlineMs);
      deps.events.emit("task", t.name, "overran", error.message, { deadlineMs: `${deadlineMs}` });
      own.abort(error);
      throw error;
    },
    () => {}, // the task settled first and cancelled the deadline
  );
  try {
    await Promise.race([t.run(own.signal), overrun]);
  } finally {
    timer.abort();
    sequenceSignal.removeEventListener("abort", onAbort);
  }
}
