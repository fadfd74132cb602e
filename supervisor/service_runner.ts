/**
 * One service's life, as a loop: wait until every dependency is ready, launch,
 * watch the process, its health and its dependencies, stop it gracefully
 * (SIGTERM to the group, SIGKILL after the grace period) when asked, and
 * restart it by policy with capped exponential backoff. Every step is guarded:
 * whatever a service or a probe does, the loop records it in the status and
 * carries on; nothing throws out of it.
 */
import { isSysError } from "../native-ops/mod.ts";
import type { ProcessExit } from "../platform/process/mod.ts";
import type { ServiceSpecSpec, ServiceStatusSpec } from "../resources/mod.ts";
import { backoffDelay, type BackoffPolicy, type Clock, deepEqual } from "../runtime/mod.ts";
import { runHealthChecker } from "./health_checker.ts";
import { type LaunchDeps, type Launched, launchService } from "./launch_service.ts";
import { Notifier } from "./notifier.ts";
import type { Prober } from "./probes.ts";

/** What a runner needs from the supervisor around it. */
export interface RunnerHost extends LaunchDeps {
  readonly clock: Clock;
  readonly prober: Prober;
  readonly backoff: BackoffPolicy;
  /** A run at least this long resets the backoff. */
  readonly resetAfterMs: number;
  /** Whether a dependency is ready, running but not ready, or not configured. */
  dependencyState(id: string): "ready" | "not-ready" | "unknown";
  /** The cycle `id` sits on, if any. */
  cycleOf(id: string): string[] | undefined;
  /** Why no service may start yet (e.g. /var not mounted), or undefined. */
  startGate(): string | undefined;
  /** A new status; `previous` is what was published before. */
  publish(id: string, status: ServiceStatusSpec, previous: ServiceStatusSpec | undefined): void;
  /** This service's readiness changed; dependents should look again. */
  readinessChanged(id: string): void;
}

/** Why a running process is being stopped. */
type StopReason = "request" | "restart" | "config" | "dependency" | "unhealthy";

const STOP_MESSAGES: Record<StopReason, string> = {
  request: "stopped by request",
  restart: "restarting by request",
  config: "restarting: configuration changed",
  dependency: "restarting: a dependency stopped being ready",
  unhealthy: "restarting: health check failing",
};

/** How long to wait for a SIGKILLed process to be reaped before giving up on it. */
const KILL_WAIT_MS = 10_000;

/** Supervises one service. */
export class ServiceRunner {
  #spec: ServiceSpecSpec;
  #status: ServiceStatusSpec;
  #wake = new Notifier();
  #parked = new Notifier();
  #isParked = false;
  /** Set by stop(); cleared by start()/restart(). */
  #stopRequested = false;
  /** The last run ended and the policy says not to restart. */
  #done = false;
  #disposed = false;
  #restartRequested = false;
  #specChanged = false;
  #unhealthy = false;
  #ready = false;
  #failures = 0;
  #launches = 0;
  readonly #loop: Promise<void>;

  constructor(readonly id: string, spec: ServiceSpecSpec, private readonly host: RunnerHost) {
    this.#spec = spec;
    this.#status = {
      state: "waiting",
      healthy: false,
      restarts: 0,
      pid: null,
      lastExit: null,
      message: "",
      since: host.clock.now(),
      logFileError: "",
      sandbox: null,
    };
    this.#loop = this.#run();
  }

  get spec(): ServiceSpecSpec {
    return this.#spec;
  }

  get status(): ServiceStatusSpec {
    return this.#status;
  }

  /** Ready for dependents. */
  get ready(): boolean {
    return this.#ready;
  }

  /** A new spec; a running process is restarted with it. */
  update(spec: ServiceSpecSpec): void {
    if (deepEqual(spec, this.#spec)) return;
    this.#spec = spec;
    this.#specChanged = true;
    this.#done = false;
    this.#failures = 0;
    this.#wake.notify();
  }

  /** Starts a stopped, finished or failed service (no-op when it runs). */
  start(): void {
    this.#stopRequested = false;
    this.#done = false;
    this.#failures = 0;
    this.#wake.notify();
  }

  /** Stops it (no automatic restart until {@link start}); resolves once it is down. */
  async stop(): Promise<void> {
    this.#stopRequested = true;
    const parked = this.#parked.wait();
    if (this.#isParked) return;
    this.#wake.notify();
    await parked;
  }

  /** Stops and starts it again, resetting the backoff. */
  restart(): void {
    this.#restartRequested = true;
    this.start();
  }

  /** Re-check dependencies (one of them changed readiness). */
  poke(): void {
    this.#wake.notify();
  }

  /** Stops the service for good; resolves when its loop has ended. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    this.#stopRequested = true;
    this.#wake.notify();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (!this.#disposed) {
      try {
        await this.#step();
      } catch (e) {
        // A bug guard: record it, wait a moment, go on.
        this.#set({ state: "failed", pid: null, message: `supervisor error: ${message(e)}` });
        await this.#sleep(this.host.backoff.maxMs, () => this.#interrupted());
      }
    }
    this.#setReady(false);
  }

  async #step(): Promise<void> {
    if (this.#stopRequested || this.#done) {
      if (this.#stopRequested && this.#status.state !== "finished") {
        this.#set({ state: "finished", healthy: false, pid: null, message: STOP_MESSAGES.request });
      }
      await this.#park();
      return;
    }
    const wake = this.#wake.wait();
    const cycle = this.host.cycleOf(this.id);
    if (cycle) {
      this.#set({ state: "failed", message: `dependency cycle: ${cycle.join(" → ")}` });
      await wake;
      return;
    }
    const blocked = this.#blockingDependency() ?? this.host.startGate();
    if (blocked) {
      this.#set({ state: "waiting", healthy: false, pid: null, message: blocked });
      await wake;
      return;
    }
    await this.#launchAndWatch();
  }

  async #launchAndWatch(): Promise<void> {
    const spec = this.#spec;
    this.#specChanged = false;
    this.#restartRequested = false;
    this.#unhealthy = false;
    const restarts = this.#launches > 0 ? this.#status.restarts + 1 : 0;
    this.#launches++;
    this.#set({ state: "starting", restarts, pid: null, message: "starting" });
    let launched: Launched;
    try {
      launched = await launchService(this.id, spec, this.host);
    } catch (e) {
      await this.#afterEnd(spec, 0, null, `start failed: ${message(e)}`);
      return;
    }
    const startedAt = this.host.clock.monotonic();
    const { exit, reason, killedAfterGrace } = await this.#watch(spec, launched);
    await this.#signal(launched.handle.pid, "SIGKILL"); // whatever is left of the group
    const lastExit = {
      code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      time: this.host.clock.now(),
      killedAfterGrace,
    };
    this.#set({ pid: null, lastExit });
    if (reason === "unhealthy") {
      const ranMs = this.host.clock.monotonic() - startedAt;
      await this.#afterEnd(spec, ranMs, exit, STOP_MESSAGES.unhealthy.replace("restarting: ", ""));
      return;
    }
    if (reason) {
      const grace = killedAfterGrace
        ? `; killed after the ${spec.stopGraceMs} ms grace period`
        : "";
      this.#set({
        state: this.#stopRequested ? "finished" : "waiting",
        message: STOP_MESSAGES[reason] + grace,
      });
      return;
    }
    await this.#afterEnd(spec, this.host.clock.monotonic() - startedAt, exit, describeExit(exit));
  }

  /** Watches a running process until it exits or something asks it to stop. */
  async #watch(
    spec: ServiceSpecSpec,
    launched: Launched,
  ): Promise<{ exit: ProcessExit | undefined; reason?: StopReason; killedAfterGrace: boolean }> {
    const { handle } = launched;
    const checker = new AbortController();
    if (spec.health) {
      this.#set({
        state: "starting",
        pid: handle.pid,
        sandbox: handle.sandbox,
        message: "waiting for the health check",
      });
      // `starting` until the probe first passes; afterwards a failing probe is `running`, unhealthy.
      let passed = false;
      runHealthChecker({
        spec: spec.health,
        prober: this.host.prober,
        clock: this.host.clock,
        processSpec: launched.processSpec,
        signal: checker.signal,
        onChange: (c) => {
          if (checker.signal.aborted) return;
          passed ||= c.healthy;
          this.#setReady(c.healthy, {
            state: passed ? "running" : "starting",
            message: c.healthy
              ? "ready"
              : passed
              ? `health check failing: ${c.message}`
              : `waiting for the health check: ${c.message}`,
          });
          if (c.failing && spec.health?.restartWhenUnhealthy) {
            this.#unhealthy = true;
            this.#wake.notify();
          }
        },
      });
    } else {
      this.#set({ state: "running", pid: handle.pid, sandbox: handle.sandbox, message: "running" });
      this.#setReady(true);
    }
    let exit: ProcessExit | undefined;
    const exited = handle.exited.then((e) => (exit = e));
    let reason: StopReason | undefined;
    try {
      while (exit === undefined) {
        const wake = this.#wake.wait();
        reason = this.#stopReason(spec);
        if (reason) break;
        await Promise.race([exited, wake]);
      }
    } finally {
      checker.abort();
      this.#setReady(false);
    }
    if (exit !== undefined) return { exit, killedAfterGrace: false };
    this.#set({ state: "stopping", healthy: false, message: STOP_MESSAGES[reason!] });
    const killedAfterGrace = await this.#terminate(handle.pid, exited, spec.stopGraceMs);
    return { exit, reason, killedAfterGrace };
  }

  #stopReason(spec: ServiceSpecSpec): StopReason | undefined {
    if (this.#stopRequested) return "request";
    if (this.#restartRequested) return "restart";
    if (this.#specChanged) return "config";
    if (this.#unhealthy) return "unhealthy";
    if (spec.onDependencyRestart === "restart" && this.#blockingDependency()) return "dependency";
    return undefined;
  }

  /** SIGTERM to the group, then SIGKILL after the grace period; true when it came to SIGKILL. */
  async #terminate(pid: number, exited: Promise<unknown>, graceMs: number): Promise<boolean> {
    await this.#signal(pid, "SIGTERM");
    let done = false;
    const finished = exited.then(() => (done = true));
    await this.#sleep(graceMs, () => done, finished);
    if (done) return false;
    await this.#signal(pid, "SIGKILL");
    await this.#sleep(KILL_WAIT_MS, () => done, finished);
    return true;
  }

  /** After a run ended by itself (or failed to start): restart by policy, or stay down. */
  async #afterEnd(
    spec: ServiceSpecSpec,
    ranMs: number,
    exit: ProcessExit | null | undefined,
    what: string,
  ): Promise<void> {
    const success = exit?.code === 0;
    if (spec.restart === "never" || (spec.restart === "on-failure" && success)) {
      this.#done = true;
      this.#set({ state: success ? "finished" : "failed", healthy: false, message: what });
      return;
    }
    this.#failures = ranMs >= this.host.resetAfterMs ? 1 : this.#failures + 1;
    const delay = backoffDelay(this.#failures, this.host.backoff);
    this.#set({
      state: "backing-off",
      healthy: false,
      message: `${what}; restarting in ${delay} ms`,
    });
    await this.#sleep(delay, () => this.#interrupted());
  }

  /** Something that should cut a backoff short: a stop, a restart, a new spec. */
  #interrupted(): boolean {
    return this.#stopRequested || this.#restartRequested || this.#specChanged || this.#disposed;
  }

  /** Sleeps `ms` on the clock, ending early when `until()` holds after a wake or `also` settles. */
  async #sleep(ms: number, until: () => boolean, also?: Promise<unknown>): Promise<void> {
    const abort = new AbortController();
    const slept = this.host.clock.sleep(ms, abort.signal).catch(() => {});
    let over = false;
    slept.then(() => (over = true));
    try {
      while (!over && !until()) {
        await Promise.race([slept, this.#wake.wait(), ...(also ? [also] : [])]);
      }
    } finally {
      abort.abort();
    }
  }

  async #park(): Promise<void> {
    const wake = this.#wake.wait();
    this.#isParked = true;
    this.#parked.notify();
    try {
      await wake;
    } finally {
      this.#isParked = false;
    }
  }

  #blockingDependency(): string | undefined {
    for (const dep of this.#spec.dependsOn) {
      const state = this.host.dependencyState(dep);
      if (state === "unknown") return `waiting for "${dep}" (not configured)`;
      if (state === "not-ready") return `waiting for "${dep}" to be ready`;
    }
    return undefined;
  }

  async #signal(pid: number, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    try {
      await this.host.process.signal({ pid, group: true }, signal);
    } catch (e) {
      if (!isSysError(e, "ESRCH")) throw e;
    }
  }

  /** Sets readiness together with `changes`, so one status (and one event) carries both. */
  #setReady(ready: boolean, changes: Partial<ServiceStatusSpec> = {}): void {
    const flipped = ready !== this.#ready;
    this.#ready = ready;
    this.#set({ ...changes, healthy: ready });
    if (flipped) this.host.readinessChanged(this.id);
  }

  /** Records whether the service's log file can be written (see ServiceStatusSpec.logFileError). */
  setLogFileError(error: string): void {
    this.#set({ logFileError: error });
  }

  #set(changes: Partial<ServiceStatusSpec>): void {
    const previous = this.#status;
    const next = { ...previous, ...changes };
    if (next.state !== previous.state) next.since = this.host.clock.now();
    if (deepEqual(next, previous)) return;
    this.#status = next;
    this.host.publish(this.id, next, previous);
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** `exited with code 1`, `killed by SIGSEGV (core dumped)`. */
export function describeExit(exit: ProcessExit | null | undefined): string {
  if (!exit) return "exited";
  if (exit.code !== null) return `exited with code ${exit.code}`;
  return `killed by ${exit.signal}${exit.coreDumped ? " (core dumped)" : ""}`;
}
