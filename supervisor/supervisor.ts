/**
 * The service supervisor: a long-running component beside the controller
 * runtime. It watches ServiceSpec resources (written by
 * `runtime.ServiceSpecController` from the machine config), runs one
 * {@link ServiceRunner} per service, gates each on its dependencies' readiness,
 * and owns the ServiceStatus resources. It is also what the API's service
 * RPCs call: {@link Supervisor.list}, `start`, `stop`, `restart`, `logs`, and
 * {@link Supervisor.stopAll} for the shutdown sequence.
 */
import { createCriClient, type CriClient } from "../cri/mod.ts";
import type { EventBus } from "../events/mod.ts";
import type { Logger, LogLine } from "../logs/mod.ts";
import type { CgroupBackend } from "../platform/cgroup/mod.ts";
import type { ProcessBackend } from "../platform/process/mod.ts";
import {
  type MachineStore,
  SERVICE_SPEC,
  SERVICE_STATUS,
  type ServiceSpecSpec,
  type ServiceStatusSpec,
} from "../resources/mod.ts";
import { type BackoffPolicy, type Clock, systemClock } from "../runtime/mod.ts";
import { findCycles, stopLayers } from "./dependency_graph.ts";
import { createProber, type Prober } from "./probes.ts";
import { type LogReadOptions, ServiceLogs, type ServiceLogsOptions } from "./service_logs.ts";
import { type RunnerHost, ServiceRunner } from "./service_runner.ts";

/** The owner of ServiceStatus resources in the store. */
export const SUPERVISOR_OWNER = "runtime.ServiceSupervisor";

/** Restart backoff of services: 1 s doubling to 30 s. */
export const SERVICE_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, factor: 2 };

/** A service id the supervisor does not know. */
export class UnknownServiceError extends Error {
  override name = "UnknownServiceError";
  constructor(readonly id: string) {
    super(`No service "${id}"`);
  }
}

/** What {@link createSupervisor} needs. */
export interface SupervisorDeps {
  readonly store: MachineStore;
  readonly process: ProcessBackend;
  /** Per-service cgroups; none in dev mode. */
  readonly cgroups?: CgroupBackend;
  /** @default systemClock */
  readonly clock?: Clock;
  readonly events?: EventBus;
  readonly logger?: Logger;
  /** Probes; tests inject their own. @default the real exec/tcp/http/cri probes */
  readonly prober?: Prober;
  /** @default SERVICE_BACKOFF */
  readonly backoff?: BackoffPolicy;
  /** A run this long resets the backoff. @default 10000 */
  readonly resetAfterMs?: number;
  /** Log rings, machined's own log (served as `machined`), rotation. */
  readonly logs?: ServiceLogsOptions;
  /** Write service logs under this directory from the start (see setLogDirectory). */
  readonly logDir?: string;
  /** Root for user/group name lookups. @default "" */
  readonly accountsRoot?: string;
  /**
   * Asked before every start: a reason holds the service in `waiting` with it
   * as the message (a node keeps services off /var until EPHEMERAL is mounted
   * there). Running services are left alone. Call {@link Supervisor.recheck}
   * when the answer may have changed. @default always open
   */
  readonly startGate?: () => string | undefined;
}

/** One service as the API lists it. */
export interface ServiceInfo {
  readonly id: string;
  readonly spec: ServiceSpecSpec;
  readonly status: ServiceStatusSpec;
}

/** Creates the supervisor and starts following ServiceSpec resources. */
export function createSupervisor(deps: SupervisorDeps): Supervisor {
  return new Supervisor(deps);
}

/** See the module doc. */
export class Supervisor {
  #logs: ServiceLogs;
  #runners = new Map<string, ServiceRunner>();
  #cycles = new Map<string, string[]>();
  #criClients = new Map<string, CriClient>();
  #host: RunnerHost;
  #watch = new AbortController();
  #watching: Promise<void>;
  #shuttingDown = false;
  #closed?: Promise<void>;
  #pending = new Set<Promise<void>>();

  constructor(private readonly deps: SupervisorDeps) {
    const clock = deps.clock ?? systemClock;
    this.#logs = new ServiceLogs({
      now: () => clock.now(),
      onFileHealth: (id, path, error) => this.#logFileHealth(id, path, error),
      ...deps.logs,
    });
    const prober = deps.prober ?? createProber({
      process: deps.process,
      cri: (socket) => this.#criClient(socket),
    });
    this.#host = {
      process: deps.process,
      cgroups: deps.cgroups,
      logs: this.#logs,
      accountsRoot: deps.accountsRoot,
      clock,
      prober,
      backoff: deps.backoff ?? SERVICE_BACKOFF,
      resetAfterMs: deps.resetAfterMs ?? 10_000,
      dependencyState: (id) => {
        const r = this.#runners.get(id);
        return !r ? "unknown" : r.ready ? "ready" : "not-ready";
      },
      cycleOf: (id) => this.#cycles.get(id),
      startGate: () => deps.startGate?.(),
      publish: (id, status, previous) => this.#publish(id, status, previous),
      readinessChanged: () => {
        for (const r of this.#runners.values()) r.poke();
      },
    };
    if (deps.logDir) this.#track(this.#logs.setDirectory(deps.logDir));
    this.#watching = this.#follow();
  }

  /** Every service with its spec and status, by id. */
  list(): ServiceInfo[] {
    return [...this.#runners.values()]
      .map((r) => ({ id: r.id, spec: r.spec, status: r.status }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** One service. @throws UnknownServiceError */
  get(id: string): ServiceInfo {
    const r = this.#runner(id);
    return { id, spec: r.spec, status: r.status };
  }

  /** Starts a stopped, finished or failed service. @throws UnknownServiceError */
  start(id: string): void {
    this.#runner(id).start();
  }

  /** Stops a service until started again; resolves when it is down. @throws UnknownServiceError */
  stop(id: string): Promise<void> {
    return this.#runner(id).stop();
  }

  /** Looks at the start gate again: services held by it start once it is open. */
  recheck(): void {
    for (const r of this.#runners.values()) r.poke();
  }

  /** Restarts a service now, resetting its backoff. @throws UnknownServiceError */
  restart(id: string): void {
    this.#runner(id).restart();
  }

  /**
   * A service's output (or machined's own log under `machined`): the last
   * `tail` lines, then new ones while `follow` until `signal` aborts.
   * @throws UnknownLogError when there is no such log.
   */
  logs(id: string, options: LogReadOptions = {}): AsyncIterable<LogLine> {
    return this.#logs.read(id, options);
  }

  /** Lines kept in memory per service (`machine.logging.ring_lines`), applied live to every ring. */
  setRingLines(lines: number): void {
    this.#logs.setRingLines(lines);
  }

  /** Starts (or stops) writing service logs to files under `dir`, e.g. /var/log. */
  setLogDirectory(dir: string | undefined): Promise<void> {
    return this.#logs.setDirectory(dir);
  }

  /**
   * Stops every service in reverse dependency order (dependents first) and
   * keeps them down: the shutdown sequence calls this before the API goes away.
   */
  async stopAll(): Promise<void> {
    this.#shuttingDown = true;
    const deps = new Map([...this.#runners].map(([id, r]) => [id, r.spec.dependsOn]));
    for (const layer of stopLayers(deps)) {
      await Promise.all(layer.map((id) => this.#runners.get(id)?.stop()));
    }
  }

  /** Stops everything, stops following specs and closes files and connections. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.stopAll();
      this.#watch.abort();
      await this.#watching;
      await Promise.all([...this.#runners.values()].map((r) => r.dispose()));
      while (this.#pending.size > 0) await Promise.all(this.#pending);
      for (const c of this.#criClients.values()) c.close();
      await this.#logs.close();
    })();
    return this.#closed;
  }

  async #follow(): Promise<void> {
    const watch = this.deps.store.watch(SERVICE_SPEC, {
      namespace: "runtime",
      signal: this.#watch.signal,
    });
    let bootstrapped = false;
    try {
      for await (const ev of watch) {
        if (ev.kind === "bootstrapped") bootstrapped = true;
        if (bootstrapped) this.#sync();
      }
    } catch (e) {
      this.deps.logger?.error("supervisor", "following service specs failed", { error: e });
    } finally {
      watch.close();
    }
  }

  /** Brings the runners in line with the ServiceSpec resources. */
  #sync(): void {
    if (this.#shuttingDown) return;
    const specs = new Map(
      this.deps.store.list(SERVICE_SPEC, { namespace: "runtime" })
        .filter((r) => r.metadata.phase === "running")
        .map((r) => [r.metadata.id, r.spec]),
    );
    this.#cycles = findCycles(new Map([...specs].map(([id, s]) => [id, s.dependsOn])));
    for (const [id, runner] of this.#runners) {
      if (!specs.has(id)) {
        this.#runners.delete(id);
        this.#track(this.#remove(runner));
      }
    }
    for (const [id, spec] of specs) {
      const runner = this.#runners.get(id);
      if (runner) runner.update(spec);
      else {
        this.#logs.ring(id); // `logs(id)` works before the first line
        this.#runners.set(id, new ServiceRunner(id, spec, this.#host));
      }
    }
    for (const r of this.#runners.values()) r.poke();
  }

  async #remove(runner: ServiceRunner): Promise<void> {
    await runner.dispose();
    const ptr = { type: SERVICE_STATUS, namespace: "runtime", id: runner.id } as const;
    try {
      if (this.deps.store.find(SERVICE_STATUS, "runtime", runner.id)) {
        if (this.deps.store.teardown(ptr, SUPERVISOR_OWNER)) {
          this.deps.store.destroy(ptr, SUPERVISOR_OWNER);
        }
      }
    } catch (e) {
      this.deps.logger?.error("supervisor", "removing service status failed", { error: e });
    }
    await this.deps.cgroups?.remove(runner.id).catch(() => {});
    if (!this.#runners.has(runner.id)) await this.#logs.drop(runner.id);
    this.deps.events?.emit("service", runner.id, "removed", "service removed from the config");
    for (const r of this.#runners.values()) r.poke();
  }

  /** A log file started failing or works again: a ServiceStatus field and an event. */
  #logFileHealth(id: string, path: string, error: unknown | undefined): void {
    const text = error === undefined
      ? ""
      : `cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`;
    this.#runners.get(id)?.setLogFileError(text);
    if (error === undefined) {
      this.deps.events?.emit("service", id, "logFileRecovered", `writing ${path} again`);
    } else {
      this.deps.events?.emit("service", id, "logFileFailed", text, { path });
      this.deps.logger?.warn("supervisor", `log file of ${id} cannot be written`, { path, error });
    }
  }

  #publish(id: string, status: ServiceStatusSpec, previous: ServiceStatusSpec | undefined): void {
    const store = this.deps.store;
    const ptr = { type: SERVICE_STATUS, namespace: "runtime", id } as const;
    try {
      const cur = store.find(SERVICE_STATUS, "runtime", id);
      if (!cur) store.create({ ...ptr, spec: status, owner: SUPERVISOR_OWNER });
      else {store.update({
          ...ptr,
          version: cur.metadata.version,
          spec: status,
          owner: SUPERVISOR_OWNER,
        });}
    } catch (e) {
      this.deps.logger?.error("supervisor", "publishing service status failed", { id, error: e });
    }
    if (status.state !== previous?.state || status.healthy !== previous?.healthy) {
      const action = status.state === "running" && status.healthy ? "ready" : status.state;
      this.deps.events?.emit("service", id, action, status.message);
      this.deps.logger?.info("supervisor", `${id} ${action}`, { message: status.message });
    }
    if (status.lastExit?.killedAfterGrace && status.lastExit !== previous?.lastExit) {
      this.deps.events?.emit(
        "service",
        id,
        "killed",
        "SIGKILL after the stop grace period ran out",
      );
    }
  }

  #runner(id: string): ServiceRunner {
    const r = this.#runners.get(id);
    if (!r) throw new UnknownServiceError(id);
    return r;
  }

  #criClient(socket: string): CriClient {
    let c = this.#criClients.get(socket);
    if (!c) {
      c = createCriClient(socket);
      this.#criClients.set(socket, c);
    }
    return c;
  }

  #track(p: Promise<void>): void {
    const tracked = p.catch((e) => {
      this.deps.logger?.error("supervisor", "background task failed", { error: e });
    }).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
