/**
 * The controller runtime: registers controllers, checks their declarations,
 * runs each in its own loop (input changes coalesced while a cycle runs,
 * periodic resync, exponential backoff on failure), collects outputs a cycle
 * did not keep, and stops gracefully. One controller that throws or hangs never
 * stops the others; its health is data ({@link ControllerStats}).
 */
import { backoffDelay, type BackoffPolicy, DEFAULT_BACKOFF } from "./backoff.ts";
import { type Clock, systemClock } from "./clock.ts";
import { CycleContext } from "./context.ts";
import { type Controller, RegistrationError } from "./controller.ts";
import { isNotFound } from "./errors.ts";
import { superviseWatch } from "./watch_supervisor.ts";
import { type Catalog, pointerKey } from "./resource.ts";
import type { Store } from "./store.ts";

/** Health of one controller, published after every cycle. */
export interface ControllerStats {
  name: string;
  state: "idle" | "running" | "backoff" | "stopped";
  reconciles: number;
  failures: number;
  consecutiveFailures: number;
  lastError?: string;
  /** Epoch ms of the last finished cycle. */
  lastReconcileAt?: number;
  lastDurationMs?: number;
  /** Epoch ms when the next retry happens while backing off. */
  nextRetryAt?: number;
  /** Times the controller's external watch failed (each is restarted: watch_supervisor.ts). */
  watchFailures?: number;
}

/** Who reads what and who writes what. */
export interface DependencyGraph {
  controllers: Array<{
    name: string;
    inputs: Array<{ type: string; kind: string }>;
    outputs: Array<{ type: string; kind: string }>;
  }>;
  /** `from` writes `type`, which `to` reads. */
  edges: Array<{ from: string; to: string; type: string }>;
}

/** Runtime options. */
export interface RuntimeOptions {
  clock?: Clock;
  backoff?: BackoffPolicy;
  /** Delays between restarts of a failed external watch. @default WATCH_BACKOFF */
  watchBackoff?: BackoffPolicy;
  /** A cycle running longer than this is abandoned and counted as a failure. @default 300000 */
  reconcileTimeoutMs?: number;
  /** How long {@link ControllerRuntime.stop} waits for running cycles. @default 10000 */
  stopTimeoutMs?: number;
  /** Receives every stats change (machined turns them into ControllerStatus resources). */
  onStats?: (stats: ControllerStats) => void;
  logger?: (controller: string, message: string, fields?: Record<string, unknown>) => void;
}

/** Cycles allowed back to back before the runtime yields to timers and I/O. */
const CYCLES_PER_YIELD = 32;

interface Entry<M extends Catalog> {
  controller: Controller<M>;
  stats: ControllerStats;
  dirty: boolean;
  wake?: () => void;
  requeueAt?: number;
  loop?: Promise<void>;
}

/** Runs a set of controllers against one store. */
export class ControllerRuntime<M extends Catalog> {
  #entries = new Map<string, Entry<M>>();
  #exclusive = new Map<string, string>();
  #stop = new AbortController();
  #started = false;
  #cyclesSinceYield = 0;
  #clock: Clock;
  #options: RuntimeOptions;

  constructor(readonly store: Store<M>, options: RuntimeOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#options = options;
  }

  /**
   * Adds a controller. @throws RegistrationError for a duplicate name, an output
   * claimed exclusively by two controllers, or registration after start.
   */
  register(controller: Controller<M>): void {
    if (this.#started) throw new RegistrationError("Cannot register controllers after start");
    if (this.#entries.has(controller.name)) {
      throw new RegistrationError(`Controller "${controller.name}" is already registered`);
    }
    for (const out of controller.outputs) {
      const holder = this.#exclusive.get(out.type);
      const shared = [...this.#entries.values()].find((e) =>
        e.controller.outputs.some((o) => o.type === out.type)
      );
      if (holder || (out.kind === "exclusive" && shared)) {
        throw new RegistrationError(
          `Controller "${controller.name}" cannot own "${out.type}": ` +
            `"${holder ?? shared!.controller.name}" already owns it` +
            (holder ? " exclusively" : ""),
        );
      }
    }
    for (const out of controller.outputs) {
      if (out.kind === "exclusive") this.#exclusive.set(out.type, controller.name);
    }
    this.#entries.set(controller.name, {
      controller,
      stats: {
        name: controller.name,
        state: "idle",
        reconciles: 0,
        failures: 0,
        consecutiveFailures: 0,
      },
      dirty: true,
    });
  }

  /** Starts every controller's loop. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#subscribe();
    for (const entry of this.#entries.values()) {
      this.#startWatch(entry);
      entry.loop = this.#run(entry);
      this.#publish(entry);
    }
  }

  /** Stops every loop; waits for running cycles up to the stop timeout. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error("controller runtime stopping"));
    const loops: Promise<void>[] = [];
    for (const entry of this.#entries.values()) {
      entry.wake?.();
      if (entry.loop) loops.push(entry.loop);
    }
    const limit = this.#options.stopTimeoutMs ?? 10_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled(loops),
      new Promise<void>((resolve) => timer = setTimeout(resolve, limit)),
    ]);
    clearTimeout(timer);
    for (const entry of this.#entries.values()) {
      entry.stats = { ...entry.stats, state: "stopped" };
      this.#publish(entry);
    }
  }

  /** Current stats of every controller, by name. */
  stats(): ControllerStats[] {
    return [...this.#entries.values()].map((e) => ({ ...e.stats }));
  }

  /** The declared dependency graph. */
  /**
   * What one controller declared it reads and writes, without building the
   * whole graph: ControllerStatus asks after every cycle of every controller.
   */
  declaration(name: string): DependencyGraph["controllers"][number] | undefined {
    const c = this.#entries.get(name)?.controller;
    if (!c) return undefined;
    return {
      name: c.name,
      inputs: c.inputs.map((i) => ({ type: i.type, kind: i.kind })),
      outputs: c.outputs.map((o) => ({ type: o.type, kind: o.kind })),
    };
  }

  graph(): DependencyGraph {
    const controllers = [...this.#entries.values()].map(({ controller: c }) => ({
      name: c.name,
      inputs: c.inputs.map((i) => ({ type: i.type, kind: i.kind })),
      outputs: c.outputs.map((o) => ({ type: o.type, kind: o.kind })),
    }));
    const edges: DependencyGraph["edges"] = [];
    for (const from of controllers) {
      for (const out of from.outputs) {
        for (const to of controllers) {
          if (to.inputs.some((i) => i.type === out.type)) {
            edges.push({ from: from.name, to: to.name, type: out.type });
          }
        }
      }
    }
    return { controllers, edges };
  }

  /** Asks a controller to reconcile now (used by tests and manual triggers). */
  trigger(name: string): void {
    const entry = this.#entries.get(name);
    if (!entry) throw new RangeError(`No controller named "${name}"`);
    this.#kick(entry);
  }

  /**
   * Triggers are synchronous commit listeners, not async watches: every change
   * committed while a cycle runs marks the controller dirty before the cycle
   * ends, so a burst of changes coalesces into exactly one more cycle.
   */
  #subscribe(): void {
    const unsubscribe = this.store.onCommit((ev) => {
      if (!("resource" in ev)) return;
      const md = ev.resource.metadata;
      for (const entry of this.#entries.values()) {
        if (this.#triggers(entry.controller, ev.kind, md)) this.#kick(entry);
      }
    });
    this.#stop.signal.addEventListener("abort", unsubscribe, { once: true });
  }

  #triggers(
    controller: Controller<M>,
    kind: string,
    md: { type: string; namespace: string; id: string; owner: string; phase: string },
  ): boolean {
    const input = controller.inputs.some((i) =>
      i.type === md.type && (i.namespace === undefined || i.namespace === md.namespace) &&
      (i.id === undefined || i.id === md.id)
    );
    if (input) return true;
    // Outputs tearing down wait for finalizers: re-run the owner when they change.
    return kind === "updated" && md.owner === controller.name && md.phase === "tearingDown" &&
      controller.outputs.some((o) => o.type === md.type);
  }

  /** Starts a controller's external watch, whose wake-ups trigger reconciles; a failed one restarts. */
  #startWatch(entry: Entry<M>): void {
    const { controller } = entry;
    if (!controller.watch) return;
    const signal = this.#stop.signal;
    void superviseWatch({
      watch: (wake, sig) => controller.watch!(wake, sig),
      wake: () => {
        if (!signal.aborted) this.#kick(entry);
      },
      signal,
      clock: this.#clock,
      backoff: this.#options.watchBackoff,
      onFailure: (e, retryInMs) => {
        entry.stats = { ...entry.stats, watchFailures: (entry.stats.watchFailures ?? 0) + 1 };
        this.#publish(entry);
        (this.#options.logger ?? (() => {}))(controller.name, "watch failed", {
          error: String(e),
          retryInMs,
        });
      },
    });
  }

  /**
   * Cycles can chain through promise callbacks alone (a controller re-triggering
   * itself, or two triggering each other), which would starve timers and I/O.
   * After a budget of cycles with no macrotask turn, wait for one. A normal chain
   * of a few controllers stays within the budget and pays nothing.
   */
  async #yieldIfBusy(): Promise<void> {
    if (++this.#cyclesSinceYield < CYCLES_PER_YIELD) return;
    this.#cyclesSinceYield = 0;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  #kick(entry: Entry<M>): void {
    entry.dirty = true;
    entry.wake?.();
  }

  async #run(entry: Entry<M>): Promise<void> {
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      await this.#waitForWork(entry);
      if (stop.aborted) break;
      entry.dirty = false;
      entry.requeueAt = undefined;
      await this.#yieldIfBusy();
      if (stop.aborted) break;
      const ok = await this.#cycle(entry);
      if (stop.aborted) break;
      if (!ok) {
        const delay = backoffDelay(
          entry.stats.consecutiveFailures,
          this.#options.backoff ?? DEFAULT_BACKOFF,
        );
        entry.stats = { ...entry.stats, state: "backoff", nextRetryAt: this.#clock.now() + delay };
        this.#publish(entry);
        try {
          await this.#clock.sleep(delay, stop);
        } catch {
          break;
        }
        entry.dirty = true;
      }
    }
  }

  async #waitForWork(entry: Entry<M>): Promise<void> {
    if (entry.dirty || this.#stop.signal.aborted) return;
    const { resyncInterval } = entry.controller;
    const now = this.#clock.now();
    const deadlines = [
      resyncInterval !== undefined
        ? (entry.stats.lastReconcileAt ?? now) + resyncInterval
        : undefined,
      entry.requeueAt,
    ].filter((d): d is number => d !== undefined);
    const timer = new AbortController();
    const woken = new Promise<void>((resolve) => (entry.wake = resolve));
    const waits: Promise<unknown>[] = [woken];
    if (deadlines.length > 0) {
      waits.push(
        this.#clock.sleep(Math.max(0, Math.min(...deadlines) - now), timer.signal).then(
          () => (entry.dirty = true),
          () => {},
        ),
      );
    }
    await Promise.race(waits);
    timer.abort();
    entry.wake = undefined;
  }

  async #cycle(entry: Entry<M>): Promise<boolean> {
    const { controller } = entry;
    const cycleAbort = new AbortController();
    const onStop = () => cycleAbort.abort(this.#stop.signal.reason);
    this.#stop.signal.addEventListener("abort", onStop, { once: true });
    const ctx = new CycleContext(
      this.store,
      controller,
      cycleAbort.signal,
      this.#clock,
      this.#options.logger ?? (() => {}),
    );
    const started = this.#clock.now();
    entry.stats = { ...entry.stats, state: "running", nextRetryAt: undefined };
    this.#publish(entry);
    const limit = this.#options.reconcileTimeoutMs ?? 300_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let error: unknown;
    try {
      // A safety net against hung cycles, on real time even under a fake clock.
      await Promise.race([
        controller.reconcile(ctx),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`reconcile timed out after ${limit} ms`)),
            limit,
          );
        }),
      ]);
      this.#collect(entry, ctx);
    } catch (e) {
      error = e;
    } finally {
      clearTimeout(timer);
      this.#stop.signal.removeEventListener("abort", onStop);
      if (error) cycleAbort.abort(error);
      ctx.expire();
    }
    if (ctx.requeueMs !== undefined) entry.requeueAt = this.#clock.now() + ctx.requeueMs;
    const finished = this.#clock.now();
    const s = entry.stats;
    entry.stats = error === undefined
      ? {
        ...s,
        state: "idle",
        reconciles: s.reconciles + 1,
        consecutiveFailures: 0,
        lastReconcileAt: finished,
        lastDurationMs: finished - started,
      }
      : {
        ...s,
        state: "idle",
        reconciles: s.reconciles + 1,
        failures: s.failures + 1,
        consecutiveFailures: s.consecutiveFailures + 1,
        lastError: error instanceof Error ? error.message : String(error),
        lastReconcileAt: finished,
        lastDurationMs: finished - started,
      };
    if (error !== undefined && !this.#stop.signal.aborted) {
      (this.#options.logger ?? (() => {}))(controller.name, "reconcile failed", {
        error: String(error),
      });
    }
    this.#publish(entry);
    return error === undefined;
  }

  /** Owner GC: outputs of this controller not kept by the cycle are torn down and destroyed. */
  #collect(entry: Entry<M>, ctx: CycleContext<M>): void {
    const owner = entry.controller.name;
    for (const out of entry.controller.outputs) {
      if (out.gc === false) continue;
      for (const r of this.store.list(out.type)) {
        if (r.metadata.owner !== owner || ctx.kept.has(pointerKey(r.metadata))) continue;
        try {
          if (this.store.teardown(r.metadata, owner)) this.store.destroy(r.metadata, owner);
        } catch (e) {
          if (!isNotFound(e)) throw e;
        }
      }
    }
  }

  #publish(entry: Entry<M>): void {
    this.#options.onStats?.({ ...entry.stats });
  }
}
