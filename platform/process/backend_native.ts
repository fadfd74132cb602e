/**
 * NativeProcessBackend: fork/exec, signals and reaping through native-ops.
 *
 * One reaper thread in the addon owns waitid for the whole process, so there
 * must be one event pump in TypeScript too: {@link nativeProcessBackend}
 * returns the process-wide instance. Its pump long-polls the addon for exits
 * and output only while something is waiting for them (live handles, open
 * pipes, exit subscribers), so an idle machined holds no pending work.
 * Once it has children, the reaper also reaps children made by `Deno.Command`,
 * which must therefore not be used for anything supervised.
 * @module
 */
import { loadNative } from "../../native-ops/mod.ts";
import { AsyncQueue } from "./async_queue.ts";
import type {
  ProcessBackend,
  ProcessExit,
  ProcessHandle,
  ProcessSpec,
  SignalTarget,
} from "./backend.ts";
import { capabilityNumber, readSandbox } from "./sandbox.ts";
import type { OciSeccompProfile } from "./seccomp_profile.ts";
import { type SignalName, signalName, signalNumber } from "./signals.ts";

interface NativeExit {
  pid: number;
  code?: number | null;
  signal?: number | null;
  coreDumped: boolean;
}
interface NativeChunk {
  pipe: number;
  data: Uint8Array;
  eof: boolean;
}
interface ProcessNative {
  processSpawn(req: {
    path: string;
    argv: string[];
    env: string[];
    cwd?: string;
    uid?: number;
    gid?: number;
    groups?: number[];
    newSession?: boolean;
    noNewPrivs?: boolean;
    seccomp?: string;
    /** An OCI profile compiled before fork; replaces `seccomp`. */
    seccompProfile?: NativeSeccompProfile;
    /** Capability numbers to keep. */
    capabilities?: number[];
    /** Paths bound read-only onto themselves in a private mount namespace. */
    readOnlyPaths?: string[];
    /** Paths hidden in the private mount namespace (empty read-only tmpfs, or /dev/null). */
    maskedPaths?: string[];
    /** 0: outlive machined; unset: SIGKILL when machined dies. */
    parentDeathSignal?: number;
    cgroup?: string;
    stdout?: string;
    stderr?: string;
  }): Promise<{ pid: number; stdoutPipe?: number | null; stderrPipe?: number | null }>;
  processEvents(
    timeoutMs: number,
    maxBytes: number,
  ): Promise<{ exits: NativeExit[]; output: NativeChunk[] }>;
  processWake(): void;
  processClosePipe(pipe: number): void;
  processKill(pid: number, signal: number, group: boolean): void;
  setChildSubreaper(on: boolean): void;
}

/** How long one long-poll may wait; it returns early on any event or wake. */
const LONG_POLL_MS = 30_000;
/** Output bytes taken per poll. */
const MAX_BATCH_BYTES = 1 << 20;
/** Exits and output that arrive before their spawn resolved are kept this long (entries). */
const EARLY_LIMIT = 1024;

function toExit(e: NativeExit): ProcessExit {
  return {
    pid: e.pid,
    code: e.code ?? null,
    signal: e.signal == null ? null : signalName(e.signal),
    coreDumped: e.coreDumped,
  };
}

class Pipe {
  controller?: ReadableStreamDefaultController<Uint8Array>;
  discard = false;
  readonly stream: ReadableStream<Uint8Array>;
  constructor(early: NativeChunk[] = []) {
    this.stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.controller = c;
      },
      cancel: () => {
        this.discard = true;
      },
    });
    for (const c of early) this.deliver(c);
  }
  /** Returns true at EOF. */
  deliver(c: NativeChunk): boolean {
    if (c.eof) {
      if (!this.discard) this.controller?.close();
      return true;
    }
    if (!this.discard && c.data.byteLength > 0) {
      this.controller?.enqueue(new Uint8Array(c.data.buffer, c.data.byteOffset, c.data.byteLength));
    }
    return false;
  }
}

/** The process backend over native-ops; use {@link nativeProcessBackend}. */
export class NativeProcessBackend implements ProcessBackend {
  readonly #native: ProcessNative;
  #live = new Map<number, (exit: ProcessExit) => void>();
  #pipes = new Map<number, Pipe>();
  #earlyExits = new Map<number, ProcessExit>();
  #earlyChunks = new Map<number, NativeChunk[]>();
  #subscribers = new Set<AsyncQueue<ProcessExit>>();
  #spawning = 0;
  #pump?: Promise<void>;
  #stopping = false;

  constructor(native: ProcessNative = loadNative() as unknown as ProcessNative) {
    this.#native = native;
  }

  async spawn(spec: ProcessSpec): Promise<ProcessHandle> {
    if (spec.argv.length === 0) throw new TypeError("ProcessSpec.argv must not be empty");
    const env = Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const newSession = spec.newSession ?? true;
    const capabilities = spec.sandbox?.capabilities?.map(capabilityNumber);
    this.#spawning++;
    let started;
    try {
      started = await this.#native.processSpawn({
        path: spec.argv[0],
        argv: spec.argv,
        env,
        cwd: spec.cwd,
        uid: spec.uid,
        gid: spec.gid,
        groups: spec.groups,
        newSession,
        noNewPrivs: spec.noNewPrivs,
        seccomp: spec.sandbox?.seccomp,
        seccompProfile: nativeProfile(spec.sandbox?.seccompProfile),
        capabilities,
        readOnlyPaths: spec.sandbox?.readOnlyPaths ? [...spec.sandbox.readOnlyPaths] : undefined,
        maskedPaths: spec.sandbox?.maskedPaths ? [...spec.sandbox.maskedPaths] : undefined,
        parentDeathSignal: spec.dieWithMachined === false ? 0 : undefined,
        cgroup: spec.cgroup,
        stdout: spec.stdout ?? "pipe",
        stderr: spec.stderr ?? "pipe",
      });
    } finally {
      this.#spawning--;
    }
    const { pid } = started;
    const exited = new Promise<ProcessExit>((resolve) => {
      const early = this.#earlyExits.get(pid);
      if (early) {
        this.#earlyExits.delete(pid);
        resolve(early);
      } else {
        this.#live.set(pid, resolve);
      }
    });
    const sandbox = spec.sandbox
      ? await readSandbox(pid, spec.sandbox.seccomp, "/proc", spec.sandbox)
      : null;
    const handle: ProcessHandle = {
      pid,
      pgid: newSession ? pid : null,
      sandbox,
      stdout: this.#openPipe(started.stdoutPipe),
      stderr: this.#openPipe(started.stderrPipe),
      exited,
    };
    this.#ensurePump();
    return handle;
  }

  #openPipe(id: number | null | undefined): ReadableStream<Uint8Array> | null {
    if (id == null) return null;
    const early = this.#earlyChunks.get(id) ?? [];
    this.#earlyChunks.delete(id);
    const pipe = new Pipe(early);
    if (!early.some((c) => c.eof)) this.#pipes.set(id, pipe);
    return pipe.stream;
  }

  signal(target: SignalTarget, signal: SignalName): Promise<void> {
    try {
      this.#native.processKill(target.pid, signalNumber(signal), target.group ?? false);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  exits(): AsyncIterableIterator<ProcessExit> {
    const queue: AsyncQueue<ProcessExit> = new AsyncQueue(() => {
      this.#subscribers.delete(queue);
      this.#maybeIdle();
    });
    this.#subscribers.add(queue);
    this.#ensurePump();
    return queue;
  }

  setChildSubreaper(on: boolean): Promise<void> {
    try {
      this.#native.setChildSubreaper(on);
      return Promise.resolve();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async close(): Promise<void> {
    for (const q of [...this.#subscribers]) q.close();
    this.#stopping = true;
    this.#native.processWake();
    try {
      await this.#pump;
    } finally {
      this.#stopping = false;
    }
  }

  #wanted(): boolean {
    return !this.#stopping &&
      (this.#live.size > 0 || this.#pipes.size > 0 || this.#subscribers.size > 0 ||
        this.#spawning > 0);
  }

  /** Nothing waits any more: release a long-poll in flight. */
  #maybeIdle(): void {
    if (this.#pump && !this.#wanted()) this.#native.processWake();
  }

  #ensurePump(): void {
    if (this.#pump || !this.#wanted()) return;
    this.#pump = this.#run().finally(() => {
      this.#pump = undefined;
      this.#ensurePump();
    });
  }

  async #run(): Promise<void> {
    while (this.#wanted()) {
      const events = await this.#native.processEvents(LONG_POLL_MS, MAX_BATCH_BYTES);
      for (const c of events.output) this.#onChunk(c);
      for (const e of events.exits) this.#onExit(toExit(e));
    }
  }

  #onChunk(c: NativeChunk): void {
    const pipe = this.#pipes.get(c.pipe);
    if (pipe) {
      if (pipe.deliver(c)) this.#pipes.delete(c.pipe);
      return;
    }
    // The spawn that owns this pipe has not resolved yet.
    const list = this.#earlyChunks.get(c.pipe) ?? [];
    list.push(c);
    this.#earlyChunks.set(c.pipe, list);
  }

  #onExit(exit: ProcessExit): void {
    const resolve = this.#live.get(exit.pid);
    if (resolve) {
      this.#live.delete(exit.pid);
      resolve(exit);
    } else if (this.#spawning > 0) {
      // Maybe ours, with its spawn still resolving; otherwise an orphan.
      this.#earlyExits.set(exit.pid, exit);
      if (this.#earlyExits.size > EARLY_LIMIT) {
        this.#earlyExits.delete(this.#earlyExits.keys().next().value!);
      }
    }
    for (const q of this.#subscribers) q.push(exit);
  }
}

let shared: NativeProcessBackend | undefined;

/** The process-wide native process backend (there is one reaper per process). */
export function nativeProcessBackend(): NativeProcessBackend {
  return shared ??= new NativeProcessBackend();
}

/** An OCI profile as native-ops' SeccompProfileJs takes it. */
interface NativeSeccompProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  syscalls: {
    names: string[];
    action: string;
    errnoRet?: number;
    args?: { index: number; value: number; valueTwo?: number; op: string }[];
  }[];
}

function nativeProfile(p: OciSeccompProfile | undefined): NativeSeccompProfile | undefined {
  if (!p) return undefined;
  return {
    defaultAction: p.defaultAction,
    defaultErrnoRet: p.defaultErrnoRet,
    syscalls: p.syscalls.map((r) => ({
      names: [...r.names],
      action: r.action,
      errnoRet: r.errnoRet,
      args: r.args.map((a) => ({ ...a })),
    })),
  };
}
