/**
 * FakeProcessBackend: a process table in memory. Tests define programs by
 * `argv[0]` and script each {@link FakeProcess}: write output, exit with a
 * code, ignore or handle signals, exit after a delay on an injected clock.
 * Good enough to test a supervisor's restart policies and grace-period kills
 * with a FakeClock, and held honest by the shared conformance suite.
 * @module
 */
import { errnoValue, SysError } from "../../native-ops/mod.ts";
import type { Clock } from "../../runtime/mod.ts";
import { FaultInjector } from "../mod.ts";
import { AsyncQueue } from "./async_queue.ts";
import type {
  ProcessBackend,
  ProcessExit,
  ProcessHandle,
  ProcessSpec,
  SignalTarget,
} from "./backend.ts";
import { declaredSandbox } from "./sandbox.ts";
import type { SignalName } from "./signals.ts";

/** What a fake program does when started; runs synchronously at spawn. */
export type FakeProgram = (process: FakeProcess) => void;

/** Signals that never kill (as in the kernel's default dispositions). */
const HARMLESS: ReadonlySet<SignalName> = new Set(["SIGCHLD", "SIGCONT", "SIGWINCH"]);

function sysError(op: string, code: string, detail: string): SysError {
  return new SysError(op, errnoValue(code), detail);
}

class FakeStream {
  controller?: ReadableStreamDefaultController<Uint8Array>;
  closed = false;
  readonly stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      this.controller = c;
    },
    cancel: () => {
      this.closed = true;
    },
  });
  write(bytes: Uint8Array): void {
    if (!this.closed) this.controller?.enqueue(bytes);
  }
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.controller?.close();
  }
}

/** One simulated process; tests drive it. */
export class FakeProcess {
  /** Signals delivered so far, in order. */
  readonly signals: SignalName[] = [];
  #exit?: ProcessExit;
  #resolveExit!: (e: ProcessExit) => void;
  #ignored = new Set<SignalName>();
  #handlers = new Map<SignalName, (p: FakeProcess) => void>();
  readonly #stdout?: FakeStream;
  readonly #stderr?: FakeStream;
  /** Resolves when the process ends. */
  readonly exited: Promise<ProcessExit>;

  constructor(
    readonly pid: number,
    readonly pgid: number | null,
    readonly spec: ProcessSpec,
    private readonly backend: FakeProcessBackend,
  ) {
    this.exited = new Promise((r) => this.#resolveExit = r);
    if ((spec.stdout ?? "pipe") === "pipe") this.#stdout = new FakeStream();
    if ((spec.stderr ?? "pipe") === "pipe") this.#stderr = new FakeStream();
  }

  /** Still running (not exited). */
  get alive(): boolean {
    return this.#exit === undefined;
  }

  /** The program (`argv[0]`). */
  get program(): string {
    return this.spec.argv[0];
  }

  /** @internal the handle's streams */
  get streams(): {
    stdout: ReadableStream<Uint8Array> | null;
    stderr: ReadableStream<Uint8Array> | null;
  } {
    return { stdout: this.#stdout?.stream ?? null, stderr: this.#stderr?.stream ?? null };
  }

  /** Write raw output (dropped when that stream is not a pipe). */
  write(stream: "stdout" | "stderr", data: string | Uint8Array): void {
    if (!this.alive) return;
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    (stream === "stdout" ? this.#stdout : this.#stderr)?.write(bytes);
  }

  /** Write `line` plus a newline. */
  writeLine(stream: "stdout" | "stderr", line: string): void {
    this.write(stream, line + "\n");
  }

  /** Ignore a signal (SIGKILL and SIGSTOP cannot be ignored). */
  ignore(...signals: SignalName[]): this {
    for (const s of signals) if (s !== "SIGKILL" && s !== "SIGSTOP") this.#ignored.add(s);
    return this;
  }

  /** Run `fn` instead of dying when `signal` arrives (e.g. exit 0 on SIGTERM). */
  on(signal: SignalName, fn: (p: FakeProcess) => void): this {
    this.#handlers.set(signal, fn);
    return this;
  }

  /** Exit normally. No effect when already exited. */
  exit(code: number): void {
    this.#finish({ pid: this.pid, code, signal: null, coreDumped: false });
  }

  /** Die from a signal. */
  killedBy(signal: SignalName, coreDumped = false): void {
    this.#finish({ pid: this.pid, code: null, signal, coreDumped });
  }

  /** Exit with `code` after `ms` on the backend's clock. */
  exitAfter(ms: number, code: number): void {
    this.backend.clock.sleep(ms).then(() => this.exit(code));
  }

  /** @internal delivery from {@link FakeProcessBackend.signal} */
  deliver(signal: SignalName): void {
    this.signals.push(signal);
    if (signal === "SIGKILL") return this.killedBy("SIGKILL");
    if (signal === "SIGSTOP" || HARMLESS.has(signal) || this.#ignored.has(signal)) return;
    const handler = this.#handlers.get(signal);
    if (handler) return handler(this);
    this.killedBy(signal);
  }

  #finish(exit: ProcessExit): void {
    if (this.#exit) return;
    this.#exit = exit;
    this.#stdout?.end();
    this.#stderr?.end();
    this.#resolveExit(exit);
    this.backend.reaped(exit);
  }
}

/** Options for {@link FakeProcessBackend}. */
export interface FakeProcessBackendOptions {
  /** Clock for {@link FakeProcess.exitAfter}; pass a FakeClock in tests. */
  clock?: Clock;
  /** @default 1000 */
  firstPid?: number;
}

const realTimers: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** The in-memory process backend. */
export class FakeProcessBackend implements ProcessBackend {
  /** Arm `spawn` or `signal` failures. */
  readonly faults = new FaultInjector();
  readonly clock: Clock;
  /** Every process ever started, in order. */
  readonly processes: FakeProcess[] = [];
  /** Whether {@link setChildSubreaper} turned adoption on. */
  subreaper = false;
  #programs = new Map<string, FakeProgram>();
  #nextPid: number;
  #subscribers = new Set<AsyncQueue<ProcessExit>>();
  #spawnWaiters: Array<{ pred: (p: FakeProcess) => boolean; resolve: (p: FakeProcess) => void }> =
    [];

  constructor(options: FakeProcessBackendOptions = {}) {
    this.clock = options.clock ?? realTimers;
    this.#nextPid = options.firstPid ?? 1000;
  }

  /** Define what `argv[0] === program` does. Unknown programs fail with ENOENT. */
  define(program: string, behaviour: FakeProgram = () => {}): this {
    this.#programs.set(program, behaviour);
    return this;
  }

  /** The processes still running. */
  running(): FakeProcess[] {
    return this.processes.filter((p) => p.alive);
  }

  /** Resolves with the next (or an existing running) process matching `pred`. */
  waitForSpawn(
    pred: (p: FakeProcess) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<FakeProcess> {
    const found = this.running().find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        pred,
        resolve: (p: FakeProcess) => {
          clearTimeout(timer);
          resolve(p);
        },
      };
      const timer = setTimeout(() => {
        this.#spawnWaiters = this.#spawnWaiters.filter((w) => w !== waiter);
        reject(new Error(`No matching fake process spawned within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#spawnWaiters.push(waiter);
    });
  }

  /**
   * A process that was not spawned here but reparented to us (an orphaned
   * grandchild); its exit shows up on {@link exits} like a real adopted orphan.
   */
  adoptOrphan(argv: string[] = ["orphan"]): FakeProcess {
    const p = new FakeProcess(
      this.#nextPid++,
      null,
      { argv, stdout: "null", stderr: "null" },
      this,
    );
    this.processes.push(p);
    return p;
  }

  spawn(spec: ProcessSpec): Promise<ProcessHandle> {
    try {
      this.faults.check("spawn", [spec]);
      if (spec.argv.length === 0) throw new TypeError("ProcessSpec.argv must not be empty");
      const behaviour = this.#programs.get(spec.argv[0]);
      if (!behaviour) throw sysError("execve", "ENOENT", spec.argv[0]);
      const pid = this.#nextPid++;
      const proc = new FakeProcess(pid, spec.newSession ?? true ? pid : null, spec, this);
      this.processes.push(proc);
      const handle: ProcessHandle = {
        pid,
        pgid: proc.pgid,
        sandbox: spec.sandbox ? declaredSandbox(spec.sandbox, spec.noNewPrivs ?? false) : null,
        ...proc.streams,
        exited: proc.exited,
      };
      behaviour(proc);
      for (const w of this.#spawnWaiters.filter((w) => w.pred(proc))) {
        this.#spawnWaiters = this.#spawnWaiters.filter((x) => x !== w);
        w.resolve(proc);
      }
      return Promise.resolve(handle);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  signal(target: SignalTarget, signal: SignalName): Promise<void> {
    try {
      this.faults.check("signal", [target, signal]);
      const targets = this.running().filter((p) =>
        target.group ? p.pgid === target.pid : p.pid === target.pid
      );
      if (target.pid <= 0) throw sysError("kill", "EINVAL", String(target.pid));
      if (targets.length === 0) {
        throw sysError("kill", "ESRCH", String(target.group ? -target.pid : target.pid));
      }
      for (const p of targets) p.deliver(signal);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  exits(): AsyncIterableIterator<ProcessExit> {
    const q: AsyncQueue<ProcessExit> = new AsyncQueue(() => this.#subscribers.delete(q));
    this.#subscribers.add(q);
    return q;
  }

  setChildSubreaper(on: boolean): Promise<void> {
    try {
      this.faults.check("setChildSubreaper", [on]);
      this.subreaper = on;
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  close(): Promise<void> {
    for (const q of [...this.#subscribers]) q.close();
    return Promise.resolve();
  }

  /** @internal called by a FakeProcess when it ends; delivered asynchronously like a real reap. */
  reaped(exit: ProcessExit): void {
    queueMicrotask(() => {
      for (const q of this.#subscribers) q.push(exit);
    });
  }
}
