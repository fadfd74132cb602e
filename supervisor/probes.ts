/**
 * Readiness probes: `exec` (a command in the service's context, through the
 * process backend, exit 0 passes), `tcp` (a connection opens), `http` (GET
 * answers 2xx/3xx) and `cri` (the runtime reports RuntimeReady). A probe
 * resolves when it passes and throws a {@link ProbeError} saying why when it
 * fails; it stops when its signal aborts (the health checker's timeout).
 */
import type { CriClient } from "../cri/mod.ts";
import type { ProcessBackend, ProcessSpec } from "../platform/process/mod.ts";
import type { HealthProbeSpec } from "../resources/mod.ts";

/** A failed probe, with the probe kind and what was seen. */
export class ProbeError extends Error {
  override name = "ProbeError";
  constructor(readonly kind: HealthProbeSpec["kind"], message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** What a probe needs besides its spec. */
export interface ProbeContext {
  readonly signal: AbortSignal;
  /** Credentials, environment and cgroup for `exec` probes: the service's own. */
  readonly processSpec: Omit<ProcessSpec, "argv">;
}

/** Runs one probe. */
export type Prober = (probe: HealthProbeSpec, ctx: ProbeContext) => Promise<void>;

/** Dependencies of the real probes. */
export interface ProberDeps {
  readonly process: ProcessBackend;
  /** A CRI client for a socket (shared per socket by the caller). */
  readonly cri: (socket: string) => CriClient;
}

/** The real probes. */
export function createProber(deps: ProberDeps): Prober {
  return (probe, ctx) => {
    switch (probe.kind) {
      case "exec":
        return execProbe(deps.process, probe.command, ctx);
      case "tcp":
        return tcpProbe(probe.address, ctx.signal);
      case "http":
        return httpProbe(probe.url, ctx.signal);
      case "cri":
        return criProbe(deps.cri(probe.socket), ctx.signal);
    }
  };
}

async function execProbe(
  process: ProcessBackend,
  command: readonly string[],
  ctx: ProbeContext,
): Promise<void> {
  const handle = await process.spawn({
    ...ctx.processSpec,
    argv: [...command],
    newSession: true,
    stdout: "null",
    stderr: "null",
  });
  const onAbort = () => process.signal({ pid: handle.pid, group: true }, "SIGKILL").catch(() => {});
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const exit = await handle.exited;
    if (ctx.signal.aborted) throw new ProbeError("exec", `probe ${command[0]} timed out`);
    if (exit.code !== 0) {
      throw new ProbeError(
        "exec",
        exit.code === null
          ? `probe ${command[0]} killed by ${exit.signal}`
          : `probe ${command[0]} exited with code ${exit.code}`,
      );
    }
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** Splits `ip:port` / `[ipv6]:port`. */
export function splitHostPort(address: string): { hostname: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (!m) throw new RangeError(`Invalid address "${address}"; expected ip:port`);
  return { hostname: m[1], port: Number(m[2]) };
}

async function tcpProbe(address: string, signal: AbortSignal): Promise<void> {
  const { hostname, port } = splitHostPort(address);
  try {
    const conn = await Deno.connect({ hostname, port, signal });
    conn.close();
  } catch (e) {
    throw new ProbeError("tcp", `connect to ${address} failed: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

async function httpProbe(url: string, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal, redirect: "manual" });
  } catch (e) {
    throw new ProbeError("http", `GET ${url} failed: ${(e as Error).message}`, { cause: e });
  }
  await res.body?.cancel();
  if (res.status < 200 || res.status >= 400) {
    throw new ProbeError("http", `GET ${url} answered ${res.status}`);
  }
}

async function criProbe(client: CriClient, signal: AbortSignal): Promise<void> {
  let conditions;
  try {
    conditions = await client.status(signal);
  } catch (e) {
    throw new ProbeError("cri", (e as Error).message, { cause: e });
  }
  const ready = conditions.find((c) => c.type === "RuntimeReady");
  if (!ready?.status) {
    throw new ProbeError(
      "cri",
      ready ? `RuntimeReady is false: ${ready.reason} ${ready.message}`.trim() : "no RuntimeReady",
    );
  }
}
