/**
 * machined keeps apid running: it starts apid through the process backend
 * (platform/process), restarts it with capped exponential backoff whenever it
 * exits, and stops it (SIGTERM, then SIGKILL after a grace period) on
 * shutdown. apid dying never touches machined: it is a separate process and
 * the internal socket server outlives it.
 */
import type { ProcessBackend, ProcessExit, ProcessSpec } from "../../platform/process/mod.ts";
import { readLines } from "../../platform/process/mod.ts";
import { type Clock, systemClock } from "../../runtime/mod.ts";

/** What the supervisor reports, for logs and the event bus. */
export type ApidSupervisorEvent =
  | { kind: "started"; pid: number }
  | { kind: "ready"; pid: number; port: number }
  | { kind: "exited"; exit: ProcessExit; restartInMs: number | null }
  | { kind: "spawnFailed"; error: unknown; restartInMs: number }
  | { kind: "output"; pid: number; stream: "stdout" | "stderr"; line: string };

/** Options of {@link ApidSupervisor}. */
export interface ApidSupervisorOptions {
  readonly backend: ProcessBackend;
  /** How to run apid (see apidProcessSpec). */
  readonly spec: ProcessSpec;
  /** First restart delay. @default 250 */
  readonly initialBackoffMs?: number;
  /** Cap on the restart delay. @default 10000 */
  readonly maxBackoffMs?: number;
  /** A run at least this long resets the backoff. @default 10000 */
  readonly resetAfterMs?: number;
  /** SIGTERM → SIGKILL grace on stop. @default 5000 */
  readonly stopGraceMs?: number;
  readonly onEvent?: (event: ApidSupervisorEvent) => void;
  /** Backoff and grace timing; a FakeClock in tests. @default systemClock */
  readonly clock?: Clock;
}

/** Supervises one apid process. */
export class ApidSupervisor {
  #o: Required<Omit<ApidSupervisorOptions, "onEvent">> & Pick<ApidSupervisorOptions, "onEvent">;
  #pid: number | undefined;
  #exited: Promise<ProcessExit> | undefined;
  #backoff: AbortController | undefined;
  #failures = 0;
  #restarts = 0;
  #stopping = false;
  #running = false;
  #readyWaiters: ((r: { pid: number; port: number }) => void)[] = [];

  constructor(options: ApidSupervisorOptions) {
    this.#o = {
      initialBackoffMs: 250,
      maxBackoffMs: 10_000,
      resetAfterMs: 10_000,
      stopGraceMs: 5_000,
      clock: systemClock,
      ...options,
    };
  }

  /** The current apid pid, if one is running. */
  get pid(): number | undefined {
    return this.#pid;
  }

  /** How many times apid was restarted after exiting. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Start supervising (spawns apid now). Idempotent. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#stopping = false;
    void this.#spawn();
  }

  /** Resolves with the next apid that reports ready (the current one if it already did not). */
  nextReady(): Promise<{ pid: number; port: number }> {
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /** Stop apid and do not restart it. Resolves once it has exited. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#running = false;
    this.#backoff?.abort();
    this.#backoff = undefined;
    const pid = this.#pid;
    const exited = this.#exited;
    if (pid === undefined || !exited) return;
    await this.#o.backend.signal({ pid }, "SIGTERM").catch(() => {});
    const grace = new AbortController();
    const timeout = this.#o.clock.sleep(this.#o.stopGraceMs, grace.signal).then(
      () => "timeout" as const,
      () => "exited" as const,
    );
    if ((await Promise.race([exited, timeout])) === "timeout") {
      await this.#o.backend.signal({ pid }, "SIGKILL").catch(() => {});
      await exited;
    }
    grace.abort();
  }

  async #spawn(): Promise<void> {
    this.#backoff = undefined;
    if (this.#stopping) return;
    const started = this.#o.clock.monotonic();
    let handle;
    try {
      handle = await this.#o.backend.spawn(this.#o.spec);
    } catch (error) {
      const restartInMs = this.#nextDelay();
      this.#o.onEvent?.({ kind: "spawnFailed", error, restartInMs });
      this.#schedule(restartInMs);
      return;
    }
    this.#pid = handle.pid;
    this.#exited = handle.exited;
    this.#o.onEvent?.({ kind: "started", pid: handle.pid });
    if (handle.stdout) void this.#pump(handle.pid, "stdout", handle.stdout);
    if (handle.stderr) void this.#pump(handle.pid, "stderr", handle.stderr);
    const exit = await handle.exited;
    this.#pid = undefined;
    this.#exited = undefined;
    if (this.#o.clock.monotonic() - started >= this.#o.resetAfterMs) this.#failures = 0;
    if (this.#stopping) {
      this.#o.onEvent?.({ kind: "exited", exit, restartInMs: null });
      return;
    }
    const restartInMs = this.#nextDelay();
    this.#o.onEvent?.({ kind: "exited", exit, restartInMs });
    this.#restarts++;
    this.#schedule(restartInMs);
  }

  #nextDelay(): number {
    const delay = Math.min(this.#o.maxBackoffMs, this.#o.initialBackoffMs * 2 ** this.#failures);
    this.#failures++;
    return delay;
  }

  #schedule(ms: number): void {
    if (this.#stopping) return;
    const backoff = this.#backoff = new AbortController();
    this.#o.clock.sleep(ms, backoff.signal).then(() => this.#spawn(), () => {});
  }

  async #pump(pid: number, stream: "stdout" | "stderr", body: ReadableStream<Uint8Array>) {
    try {
      for await (const line of readLines(body)) {
        const ready = stream === "stdout" ? parseReady(line) : undefined;
        if (ready) {
          this.#o.onEvent?.({ kind: "ready", pid, port: ready.port });
          for (const w of this.#readyWaiters.splice(0)) w({ pid, port: ready.port });
        } else {
          this.#o.onEvent?.({ kind: "output", pid, stream, line });
        }
      }
    } catch {
      // The pipe broke because apid died; its exit is reported separately.
    }
  }
}

function parseReady(line: string): { port: number } | undefined {
  if (!line.startsWith('{"apid":"ready"')) return undefined;
  try {
    const v = JSON.parse(line) as { port?: unknown };
    return typeof v.port === "number" ? { port: v.port } : undefined;
  } catch {
    return undefined;
  }
}
