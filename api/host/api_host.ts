/**
 * Hosts the API for a running machined: the internal MachineService on a Unix
 * socket (in this process) and apid (machined-edge: a separate, supervised,
 * unprivileged Rust process) that terminates mutual TLS on the public port
 * and forwards to it.
 * apid dying never touches machined; the supervisor restarts it.
 */
import { join } from "node:path";
import {
  APID_DEFAULTS,
  apidLimitsFromConfig,
  ApidSupervisor,
  type ApidSupervisorEvent,
  edgeProcessSpec,
} from "../edge/mod.ts";
import type { ApiConfig } from "../../config/mod.ts";
import {
  type ConfigApplier,
  createClientConfigIssuer,
  type InternalApiServer,
  type KernelLog,
  type LogSource,
  type MachineServiceDeps,
  type NodeActions,
  nodeApiEndpoints,
  type ServiceControl,
  startInternalApiServer,
} from "../server/mod.ts";
import type { NodePki } from "../../pki/mod.ts";
import type { ProcessBackend } from "../../platform/process/mod.ts";
import type { MallocBackend } from "../../platform/memory/mod.ts";
import type { Machined } from "../../core/mod.ts";
import { Observer } from "../../observe/mod.ts";
import { nativeFsUsage, NativeProcBackend } from "../../platform/procfs/mod.ts";
import { createSntpTimeQuerier } from "./time_querier.ts";
import { createCriClient } from "../../cri/mod.ts";
import { createNodeMetrics } from "./node_metrics.ts";
import type { MetricsRegistry } from "../../metrics/mod.ts";

import type { MaintenanceGate } from "../server/mod.ts";
import type { CallerIdentity } from "../auth/mod.ts";
import type { CgroupBackend, CgroupLimits } from "../../platform/cgroup/mod.ts";

/** Options of {@link startApiHost}. */
export interface ApiHostOptions {
  machined: Machined;
  /**
   * The directory FileList and FileRead treat as the node's `/` (api/server/files).
   * Absent: those RPCs answer Unimplemented. A node passes `/`; dev mode a directory of its state.
   */
  fileRoot?: string;
  pki: NodePki;
  /** Where ca.crt, server.crt and server.key live for apid. */
  pkiDir: string;
  /** Directory for machined's internal API socket. */
  runDir: string;
  /** `host:port` apid listens on. */
  listen: string;
  /** `machine.api`: message size and stream limits (defaults without). */
  api?: Pick<ApiConfig, "max_message_bytes" | "max_concurrent_streams">;
  processBackend: ProcessBackend;
  actions: NodeActions;
  /**
   * Endpoints written into client configs issued over the API when the node
   * has no usable address of its own; otherwise they are the node's
   * addresses (AddressStatus) with the listen port (`nodeApiEndpoints`).
   */
  endpoints: () => readonly string[];
  /** Service control and logs (the supervisor); RPCs answer Unimplemented without. */
  services?: ServiceControl & LogSource;
  /** The kernel log for Dmesg. */
  kernelLog?: KernelLog;
  /** The per-service cgroup directory, for the services' usage metrics (a node). */
  serviceCgroups?: string;
  /** ApplyConfiguration. */
  configs?: ConfigApplier;
  /** Maintenance mode's gate (api/host/maintenance_gate.ts); without it maintenance callers are refused. */
  maintenance?: MaintenanceGate;
  /** Run apid as the machined-api user (on a node). */
  dropUser: boolean;
  /** machined-edge's binary. @default edgeBinaryPath() (api/edge/) */
  edgeBinary?: string;
  /**
   * The edge's own cgroup (a node): made with these limits before the first
   * start and joined before each exec, so a runaway edge is OOM-killed alone and
   * restarted, never machined. Without it (dev mode, tests) it shares ours.
   */
  cgroup?: { backend: CgroupBackend; name: string; limits: CgroupLimits };
  /** machined's malloc heap, for /metrics' `machined_malloc_*` families. */
  malloc?: MallocBackend;
}

/** The running API. */
export interface ApiHost {
  readonly supervisor: ApidSupervisor;
  readonly internal: InternalApiServer;
  /** Resolves when apid listens (the first time, or after a restart). */
  ready(): Promise<{ pid: number; port: number }>;
  /**
   * Resolves once, when the first call whose caller `skip` does not pass
   * (the readiness probe's are skipped) has been answered through the edge:
   * when a client was first served. Call it before the edge listens, so no
   * call is missed; only the first call of it counts.
   */
  firstServed(skip: (caller: CallerIdentity) => boolean): Promise<FirstServed>;
  /**
   * apid reads its PKI directory again (SIGHUP) for new connections, open
   * ones untouched: how a re-issued certificate, another CA or the end of
   * maintenance mode reach it without a restart that would refuse
   * connections meanwhile. Not running, or the signal refused: restarted.
   */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** The first client call answered: who, and when (performance.now()). */
export interface FirstServed {
  readonly caller: CallerIdentity;
  readonly at: number;
}

/** Starts the internal server and apid. */
export async function startApiHost(o: ApiHostOptions): Promise<ApiHost> {
  const socketPath = join(o.runDir, "machined-api.sock");
  await Deno.mkdir(o.runDir, { recursive: true });
  const limits = apidLimitsFromConfig(o.api);
  const started: { supervisor?: ApidSupervisor; cgroup?: string } = {};
  const first = firstServedTracker();
  const observer = nodeObserver(o, started);
  const registry = createNodeMetrics(o.machined, {
    services: o.services,
    serviceCgroups: o.serviceCgroups,
    malloc: o.malloc,
  });
  const internal = await startInternalApiServer({
    socketPath,
    registry,
    deps: machineServiceDeps(o, observer, registry),
    socketGroup: o.dropUser ? 50000 : undefined,
    readMaxBytes: limits.readMaxBytes,
    writeMaxBytes: limits.writeMaxBytes,
    answered: first.answered,
  });
  const [hostname, port] = splitListen(o.listen);
  const apid = { ...APID_DEFAULTS, ...limits, pkiDir: o.pkiDir, socketPath, hostname, port };
  const spec = edgeProcessSpec({ apid, dropUser: o.dropUser, binary: o.edgeBinary });
  const cgroup = started.cgroup = await prepareEdgeCgroup(o);
  const supervisor = started.supervisor = new ApidSupervisor({
    backend: o.processBackend,
    spec: cgroup ? { ...spec, cgroup } : spec,
    onEvent: (e) => report(o.machined, e),
  });
  const firstReady = supervisor.nextReady();
  supervisor.start();
  return {
    supervisor,
    internal,
    ready: () => firstReady,
    firstServed: first.watch,
    async reload() {
      const pid = supervisor.pid;
      const signalled = pid !== undefined &&
        await o.processBackend.signal({ pid }, "SIGHUP").then(() => true, () => false);
      if (signalled) {
        o.machined.logger.info("apid", "reloading its PKI directory", { pid });
        return;
      }
      await supervisor.stop();
      supervisor.start();
    },
    async stop() {
      await supervisor.stop();
      await internal.close();
    },
  };
}

/**
 * The observer of processes, cgroups and disks: the host's /proc in dev mode (read-only),
 * the node's on a node.
 */
function nodeObserver(
  o: ApiHostOptions,
  started: { supervisor?: ApidSupervisor; cgroup?: string },
): Observer {
  return new Observer({
    proc: new NativeProcBackend(),
    services: () => (o.services?.list() ?? []).map((s) => ({ id: s.id, pid: s.status.pid })),
    components: () => ({ machined: Deno.pid, apid: started.supervisor?.pid }),
    cgroups: new NativeProcBackend("/sys/fs/cgroup"),
    componentCgroups: (): Record<string, string> =>
      started.cgroup ? { apid: started.cgroup.replace(/^\/sys\/fs\/cgroup\/?/, "") } : {},
    fsUsage: nativeFsUsage,
  });
}

/** What MachineService's handlers reach in this machined. */
function machineServiceDeps(
  o: ApiHostOptions,
  observer: Observer,
  registry: MetricsRegistry,
): MachineServiceDeps {
  return {
    store: o.machined.store,
    actions: o.actions,
    events: o.machined.events,
    clientConfigs: createClientConfigIssuer(
      o.pki.ca,
      () => nodeApiEndpoints(o.machined.store, o.listen, o.endpoints),
    ),
    services: o.services,
    logs: o.services,
    kernelLog: o.kernelLog,
    configs: o.configs,
    observer,
    timeQuerier: createSntpTimeQuerier(),
    secrets: () => (o.services?.list() ?? []).flatMap((s) => Object.values(s.spec.env)),
    cri: (socket) => createCriClient(socket, { timeoutMs: 5000 }),
    metrics: registry,
    graph: () => o.machined.runtime.graph(),
    maintenance: o.maintenance,
    audit: o.machined.logger,
    files: o.fileRoot === undefined ? undefined : { root: o.fileRoot },
  };
}

/** The internal server's `answered` hook, wanted from `watch` until the first client's call. */
function firstServedTracker() {
  let skip: ((caller: CallerIdentity) => boolean) | undefined;
  let resolve: ((f: FirstServed) => void) | undefined;
  let served: Promise<FirstServed> | undefined;
  return {
    answered: {
      wanted: () => resolve !== undefined,
      done(caller: CallerIdentity | undefined) {
        if (!caller || !resolve || skip?.(caller)) return;
        resolve({ caller, at: performance.now() });
        resolve = undefined;
      },
    },
    watch(s: (caller: CallerIdentity) => boolean): Promise<FirstServed> {
      skip = s;
      served ??= new Promise<FirstServed>((r) => (resolve = r));
      return served;
    },
  };
}

/**
 * The edge's cgroup path, or undefined (none asked, or it cannot be made:
 * logged, and the edge runs in ours rather than not at all).
 */
async function prepareEdgeCgroup(o: ApiHostOptions): Promise<string | undefined> {
  if (!o.cgroup) return undefined;
  try {
    return await o.cgroup.backend.prepare(o.cgroup.name, o.cgroup.limits);
  } catch (e) {
    o.machined.logger.error("apid", "cannot make its cgroup; running it in machined's", {
      error: e,
    });
    return undefined;
  }
}

function report(m: Machined, e: ApidSupervisorEvent): void {
  switch (e.kind) {
    case "started":
      m.logger.info("apid", "started", { pid: e.pid });
      break;
    case "ready":
      m.events.emit("api", "apid", "ready", `listening on port ${e.port}`, { pid: String(e.pid) });
      m.logger.info("apid", "ready", { pid: e.pid, port: e.port });
      break;
    case "exited":
      m.events.emit("api", "apid", "exited", `code=${e.exit.code} signal=${e.exit.signal}`);
      m.logger.warn("apid", "exited", {
        code: e.exit.code,
        signal: e.exit.signal,
        restartInMs: e.restartInMs,
      });
      break;
    case "spawnFailed":
      m.logger.error("apid", "spawn failed", { error: e.error, restartInMs: e.restartInMs });
      break;
    case "output":
      m.logger.info("apid", e.line, { stream: e.stream });
      break;
  }
}

/** `host:port` → [host, port]; IPv6 hosts in brackets. */
export function splitListen(listen: string): [string, number] {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(listen);
  if (!m) throw new RangeError(`Listen address "${listen}" is not host:port`);
  return [m[1], Number(m[2])];
}
