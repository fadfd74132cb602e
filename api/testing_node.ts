/**
 * Test doubles behind the API's node interfaces: a service table with
 * recorded start/stop/restart calls, log rings with a live reader count, and
 * a config applier over the real config parser. The kernel log uses
 * platform/kmsg's FakeKmsgBackend. Not for production.
 */
import {
  configDiff,
  type MachineConfig,
  parseMachineConfig,
  type PatchText,
} from "../config/mod.ts";
import { LogRing } from "../logs/mod.ts";
import type { ServiceSpecSpec, ServiceStatusSpec } from "../resources/mod.ts";
import type {
  ActionRequester,
  ConfigApplier,
  ConfigApplyOptions,
  ConfigApplyResult,
  LogEntry,
  LogSource,
  LogSourceReadOptions,
  ServiceControl,
  ServiceView,
} from "./server/mod.ts";
import { ApplyRefusedError } from "./server/mod.ts";

/** The error a real supervisor throws for an unknown id (matched by name). */
class UnknownServiceError extends Error {
  override name = "UnknownServiceError";
}

/** The error a real supervisor throws for an unknown log (matched by name). */
class UnknownLogError extends Error {
  override name = "UnknownLogError";
}

/** A minimal spec for a fake service. */
export function fakeServiceSpec(command: string[], dependsOn: string[] = []): ServiceSpecSpec {
  return {
    command,
    env: {},
    cwd: "/",
    user: 0,
    group: 0,
    dependsOn,
    restart: "always",
    stopGraceMs: 1000,
    onDependencyRestart: "restart",
    limits: {},
    files: [],
    dirs: [],
    builtin: false,
  };
}

/** Services in memory: start/stop/restart change the status and are recorded. */
export class FakeServiceControl implements ServiceControl {
  readonly calls: string[] = [];
  #services = new Map<string, { spec: ServiceSpecSpec; status: ServiceStatusSpec }>();
  #nextPid = 100;

  /** Adds a running service. */
  add(id: string, spec: ServiceSpecSpec, status: Partial<ServiceStatusSpec> = {}): this {
    this.#services.set(id, {
      spec,
      status: {
        state: "running",
        healthy: true,
        restarts: 0,
        pid: this.#nextPid++,
        lastExit: null,
        message: "",
        since: 1_700_000_000_000,
        logFileError: "",
        sandbox: null,
        ...status,
      },
    });
    return this;
  }

  list(): ServiceView[] {
    return [...this.#services.keys()].sort().map((id) => this.get(id));
  }

  get(id: string): ServiceView {
    const s = this.#services.get(id);
    if (!s) throw new UnknownServiceError(`No service "${id}"`);
    return { id, spec: s.spec, status: s.status };
  }

  start(id: string): void {
    const s = this.get(id);
    this.calls.push(`start ${id}`);
    if (s.status.state === "running") return;
    this.#set(id, { ...s.status, state: "running", pid: this.#nextPid++, message: "" });
  }

  stop(id: string): Promise<void> {
    const s = this.get(id);
    this.calls.push(`stop ${id}`);
    this.#set(id, {
      ...s.status,
      state: "finished",
      healthy: false,
      pid: null,
      lastExit: { code: null, signal: "SIGTERM", time: 1_700_000_001_000, killedAfterGrace: false },
      message: "stopped by request",
    });
    return Promise.resolve();
  }

  restart(id: string): void {
    const s = this.get(id);
    this.calls.push(`restart ${id}`);
    this.#set(id, {
      ...s.status,
      state: "running",
      restarts: s.status.restarts + 1,
      pid: this.#nextPid++,
    });
  }

  #set(id: string, status: ServiceStatusSpec): void {
    this.#services.set(id, { spec: this.#services.get(id)!.spec, status });
  }
}

/** Logs in LogRings, counting live readers so tests can await a follower's release. */
export class FakeLogSource implements LogSource {
  readonly #rings = new Map<string, LogRing>();
  #readers = 0;
  #waiters: { n: number; resolve: () => void }[] = [];
  #time = 1_700_000_000_000;

  /** Appends a line to `id`'s log (creating it). */
  push(id: string, text: string, stream: LogEntry["stream"] = "stdout"): void {
    let ring = this.#rings.get(id);
    if (!ring) this.#rings.set(id, ring = new LogRing(100, () => this.#time += 1000));
    ring.push(stream, text);
  }

  /** Serves an existing ring as `id`'s log (the fixture serves machined's logger as `machined`). */
  serve(id: string, ring: LogRing): this {
    this.#rings.set(id, ring);
    return this;
  }

  /** Readers currently iterating. */
  get readers(): number {
    return this.#readers;
  }

  /** Resolves once exactly `n` readers are iterating. */
  whenReaders(n: number): Promise<void> {
    if (this.#readers === n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }

  logs(id: string, options: LogSourceReadOptions): AsyncIterable<LogEntry> {
    const ring = this.#rings.get(id);
    if (!ring) throw new UnknownLogError(`No log for "${id}": no such service`);
    return this.#counted(ring.read(options));
  }

  async *#counted(lines: AsyncIterable<LogEntry>): AsyncGenerator<LogEntry> {
    this.#changeReaders(+1);
    try {
      yield* lines;
    } finally {
      this.#changeReaders(-1);
    }
  }

  #changeReaders(by: number): void {
    this.#readers += by;
    const ready = this.#waiters.filter((w) => w.n === this.#readers);
    this.#waiters = this.#waiters.filter((w) => w.n !== this.#readers);
    for (const w of ready) w.resolve();
  }
}

/**
 * Validates with the real parser; records what was applied (not dry runs) and
 * keeps the last applied config as the one in force, so that a reply carries
 * a real diff against it. No mode is ever refused.
 */
export class RecordingConfigApplier implements ConfigApplier {
  readonly applied: { text: string; by: string }[] = [];
  readonly dryRuns: string[] = [];
  /** The config in force: the last one applied (none at first). */
  current?: MachineConfig;

  apply(text: string, options: ConfigApplyOptions): Promise<ConfigApplyResult> {
    const parsed = parseMachineConfig(text, "api");
    if (!parsed.ok) {
      return Promise.resolve({
        state: "invalid",
        errors: parsed.errors.map((e) => ({
          path: e.path,
          line: e.line,
          column: e.column,
          message: e.message,
          ...(e.hint ? { hint: e.hint } : {}),
        })),
      });
    }
    const current = this.current;
    const changed = configDiff(current ?? {}, parsed.config);
    if (options.dryRun) this.dryRuns.push(text);
    else {
      this.applied.push({ text, by: `${options.by.name}/${options.by.role}` });
      this.current = parsed.config;
    }
    const mode = options.mode === undefined || options.mode === "auto" ? "no-reboot" : options.mode;
    return Promise.resolve({
      state: "valid",
      errors: [],
      mode,
      changed,
      rebootFields: [],
      ...(current ? { current } : {}),
      requested: parsed.config,
    });
  }

  /** Patches are recorded, never applied: this fake keeps no document. */
  readonly patches: { patches: readonly PatchText[]; baseSha256?: string }[] = [];

  patch(patches: readonly PatchText[], options: ConfigApplyOptions): Promise<ConfigApplyResult> {
    this.patches.push({
      patches,
      ...(options.baseSha256 ? { baseSha256: options.baseSha256 } : {}),
    });
    return Promise.reject(new ApplyRefusedError("This fake applier does not patch"));
  }

  confirm(by: ActionRequester): Promise<ConfigApplyResult> {
    this.applied.push({ text: "(confirm)", by: `${by.name}/${by.role}` });
    return Promise.resolve({ state: "valid", errors: [], mode: "try", changed: [] });
  }
}
