/**
 * The process backend: what the service supervisor uses to start, signal and
 * reap processes. The native implementation forks and execs through
 * native-ops, with one reaper thread owning waitid for the whole of machined;
 * the fake simulates processes that tests script (exit codes, output,
 * ignored signals).
 * @module
 */
import type { ProcessSandbox, SandboxInForce } from "./sandbox.ts";
import type { SignalName } from "./signals.ts";

/** Where a child's stdout/stderr goes. */
export type StdioMode = "pipe" | "null" | "inherit";

/** What to run and with which credentials and placement. */
export interface ProcessSpec {
  /** `argv[0]` is the program; without a `/` it is looked up on `env.PATH`. */
  argv: string[];
  /** The whole environment; nothing is inherited from machined. */
  env?: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Supplementary groups; none when uid/gid is set and this is omitted. */
  groups?: number[];
  /**
   * setsid(): own session and process group, so the whole group can be
   * signalled and it does not share machined's.
   * @default true
   */
  newSession?: boolean;
  /** Set PR_SET_NO_NEW_PRIVS so setuid binaries cannot gain privileges. */
  noNewPrivs?: boolean;
  /**
   * A seccomp filter and the capabilities kept, applied between fork and
   * exec. Unset: no filter, capabilities as inherited.
   */
  sandbox?: ProcessSandbox;
  /**
   * The child gets SIGKILL when machined dies (PR_SET_PDEATHSIG, set between
   * fork and exec), so nothing machined starts outlives it.
   * @default true
   */
  dieWithMachined?: boolean;
  /** A cgroup v2 directory the child joins before exec. */
  cgroup?: string;
  /** @default "pipe" */
  stdout?: StdioMode;
  /** @default "pipe" */
  stderr?: StdioMode;
}

/** How a process ended: exactly one of `code` and `signal` is set. */
export interface ProcessExit {
  pid: number;
  code: number | null;
  signal: string | null;
  coreDumped: boolean;
}

/** A started process. */
export interface ProcessHandle {
  readonly pid: number;
  /** Its process group: `pid` with a new session, null when it shares machined's. */
  readonly pgid: number | null;
  /** Output bytes when `stdout` is `"pipe"`; ends at EOF. Read it or cancel it. */
  readonly stdout: ReadableStream<Uint8Array> | null;
  readonly stderr: ReadableStream<Uint8Array> | null;
  /**
   * The sandbox in force right after exec, read back from the kernel; null
   * when the spec had no sandbox or the process was gone before it was read.
   */
  readonly sandbox: SandboxInForce | null;
  /** Resolves once the process has been reaped. */
  readonly exited: Promise<ProcessExit>;
}

/** Signal one process or a whole process group. */
export interface SignalTarget {
  pid: number;
  /** Signal the process group `pid` instead of the process. */
  group?: boolean;
}

/**
 * Starting and reaping processes.
 *
 * Idempotence: `spawn` is not idempotent (each call starts a process);
 * `signal` on a process that is already gone fails with ESRCH, which callers
 * stopping a service may treat as done.
 */
export interface ProcessBackend {
  /**
   * Start a process; resolves once exec succeeded.
   * @throws SysError with the failing step as op (`execve` ENOENT, `chdir`, `cgroup.procs`, ...)
   */
  spawn(spec: ProcessSpec): Promise<ProcessHandle>;
  /** @throws SysError ESRCH when no such process or group exists. */
  signal(target: SignalTarget, signal: SignalName): Promise<void>;
  /**
   * Every exit reaped from now on, including orphans adopted as PID 1 or as a
   * subreaper. Each call is a new subscription; `return()` ends it.
   */
  exits(): AsyncIterableIterator<ProcessExit>;
  /** Adopt orphaned descendants (PR_SET_CHILD_SUBREAPER); dev mode and tests stand in for PID 1. */
  setChildSubreaper(on: boolean): Promise<void>;
  /** Stop event delivery now (processes keep running). Safe to call twice. */
  close(): Promise<void>;
}
