/**
 * The observability RPCs (Memory, Stats, ...): what an operator reaches for
 * when something is wrong on a node with no shell. They read /proc through
 * machined's {@link Observer}; all are reader RPCs and change nothing.
 * Without an observer they answer Unimplemented.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  InvalidArgumentError,
  ResourceExhaustedError,
  UnavailableError,
  UnimplementedError,
} from "../errors/mod.ts";
import {
  CgroupsResponseSchema,
  type MachineService,
  MemoryResponseSchema,
  MountsResponseSchema,
  NetstatResponseSchema,
  ProcessesResponseSchema,
  StatsResponseSchema,
  TimeQuerySchema,
  TimeResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import type { Observer } from "../../observe/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineStore,
  TIME_STATUS,
  TIME_STATUS_ID,
} from "../../resources/mod.ts";
import { timeStatusToProto } from "../mapping/mod.ts";
import {
  createTokenBucket,
  parseTimeServer,
  TIME_QUERY_BUDGET,
  type TimeQuerier,
  type TokenBucket,
} from "./time_query.ts";
import { authorizeTimeServer, callerKey, redactArgv, visibilityOf } from "../auth/mod.ts";

/** The dependencies of these handlers. */
export interface ObserveDeps {
  /** /proc joined with machined's services (Memory, Stats...). */
  readonly observer?: Observer;
  /**
   * Values readers may not see (every service's env values), hidden in the
   * command lines Processes shows them (redaction.ts, redactArgv).
   */
  readonly secrets?: () => readonly string[];
  /** Time's on-demand SNTP query; without it a Time request naming a server is Unimplemented. */
  readonly timeQuerier?: TimeQuerier;
  /**
   * The node's budget of Time queries naming a server.
   * @default a bucket of {@link TIME_QUERY_BUDGET}
   */
  readonly timeBudget?: TokenBucket;
}

type ObserveMethods = "memory" | "stats" | "processes" | "mounts" | "cgroups" | "time" | "netstat";

/**
 * Caps that keep an answer under apid's 4 MiB message limit on any node:
 * 1 KiB of argv per process × 3000 processes, 20000 sockets of ~100 bytes.
 */
export const OBSERVE_LIMITS = { argvBytes: 1024, processes: 3000, sockets: 20_000 } as const;

/** The handlers of the observability RPCs. */
export function createObserveHandlers(
  deps: ObserveDeps & { readonly store: MachineStore },
): Pick<ServiceImpl<typeof MachineService>, ObserveMethods> {
  const timeBudget = deps.timeBudget ?? createTokenBucket(TIME_QUERY_BUDGET);
  const observer = (rpc: string) => {
    if (deps.observer) return deps.observer;
    throw new UnimplementedError(
      `${rpc} is not available: this machined runs without an observer`,
      { context: { rpc } },
    );
  };
  return {
    memory: async () => memoryResponse(await observer("Memory").memory()),
    stats: async () => statsResponse(await observer("Stats").stats()),
    async processes(_req, ctx) {
      const r = await observer("Processes").processReport();
      const visibility = visibilityOf(ctx.values.get(callerKey)?.role);
      const secrets = visibility === "privileged" ? [] : deps.secrets?.() ?? [];
      return processesResponse(r, (argv) => redactArgv(argv, secrets, visibility));
    },
    mounts: async () => mountsResponse(await observer("Mounts").mounts()),
    cgroups: async () => cgroupsResponse(await observer("Cgroups").cgroups()),
    time: (req, ctx) => timeResponse(deps, timeBudget, req, ctx),
    netstat: async () => netstatResponse(await observer("Netstat").sockets()),
  };
}

/** What the observer answers for `method`. */
type Report<M extends keyof Observer> = Observer[M] extends (...a: never[]) => Promise<infer R> ? R
  : never;

function memoryResponse(r: Report<"memory">) {
  return create(MemoryResponseSchema, {
    meminfo: {
      ...u64s(r.meminfo),
      fields: Object.fromEntries(Object.entries(r.meminfo.fields).map(([k, v]) => [k, u64(v)])),
    },
    processes: r.processes.map((p) => ({
      pid: p.pid,
      owner: p.owner,
      command: p.comm,
      rssBytes: u64(p.rssBytes),
      pssBytes: p.pssBytes === undefined ? undefined : u64(p.pssBytes),
    })),
    owners: r.owners.map((o) => ({ ...u64s(o), processes: o.processes })),
  });
}

function statsResponse(r: Report<"stats">) {
  return create(StatsResponseSchema, {
    load: { ...r.load },
    cpuTotal: { ...r.cpuTotal },
    cpus: r.cpus.map((c) => ({ ...c })),
    disks: r.disks.map(u64s),
    links: r.links.map(u64s),
    uptimeSeconds: r.uptimeSeconds,
    contextSwitches: u64(r.contextSwitches),
    processesCreated: u64(r.processesCreated),
    processesRunning: r.processesRunning,
    processesBlocked: r.processesBlocked,
    sampleIntervalMs: r.sampleIntervalMs,
  });
}

/** Processes capped at {@link OBSERVE_LIMITS}, each argv through `redact` then capped. */
function processesResponse(
  r: Report<"processReport">,
  redact: (argv: readonly string[]) => string[],
) {
  const kept = r.processes.slice(0, OBSERVE_LIMITS.processes);
  return create(ProcessesResponseSchema, {
    omitted: r.processes.length - kept.length,
    processes: kept.map((p) => ({
      pid: p.pid,
      ppid: p.ppid,
      state: p.state,
      threads: p.threads,
      cpuSeconds: p.cpuSeconds,
      cpuPercent: p.cpuPercent,
      rssBytes: u64(p.rssBytes),
      pssBytes: p.pssBytes === undefined ? undefined : u64(p.pssBytes),
      command: p.comm,
      args: capArgv(redact(p.argv), OBSERVE_LIMITS.argvBytes),
      owner: p.owner,
      uid: p.uid,
      startSeconds: p.startSeconds,
    })),
    sampleIntervalMs: r.sampleIntervalMs,
  });
}

function mountsResponse(r: Report<"mounts">) {
  return create(MountsResponseSchema, {
    mounts: r.map((m) => ({
      source: m.source,
      target: m.target,
      fstype: m.fstype,
      options: m.options,
      ...(m.usage
        ? {
          sizeBytes: u64(m.usage.size),
          usedBytes: u64(m.usage.used),
          availableBytes: u64(m.usage.available),
        }
        : {}),
    })),
  });
}

function cgroupsResponse(r: Report<"cgroups">) {
  return create(CgroupsResponseSchema, {
    cgroups: r.map((c) => ({
      owner: c.owner,
      path: c.path,
      memoryCurrentBytes: u64(c.memoryCurrentBytes),
      memoryMaxBytes: c.memoryMaxBytes === undefined ? undefined : u64(c.memoryMaxBytes),
      memoryEvents: u64Map(c.memoryEvents),
      cpuStat: u64Map(c.cpuStat),
      pidsCurrent: u64(c.pidsCurrent),
      pidsMax: c.pidsMax === undefined ? undefined : u64(c.pidsMax),
    })),
  });
}

function netstatResponse(r: Report<"sockets">) {
  const kept = r.slice(0, OBSERVE_LIMITS.sockets);
  return create(NetstatResponseSchema, {
    omitted: r.length - kept.length,
    sockets: kept.map((s) => ({
      ...s,
      inode: u64(s.inode),
      txQueue: u64(s.txQueue),
      rxQueue: u64(s.rxQueue),
    })),
  });
}

type TimeHandler = ServiceImpl<typeof MachineService>["time"];

/** TimeStatus, plus an on-demand SNTP query when the request names a server (authorized, budgeted). */
async function timeResponse(
  deps: ObserveDeps & { readonly store: MachineStore },
  timeBudget: TokenBucket,
  req: Parameters<TimeHandler>[0],
  ctx: Parameters<TimeHandler>[1],
) {
  const status = deps.store.list(TIME_STATUS).find((r) => r.metadata.id === TIME_STATUS_ID);
  const response = create(TimeResponseSchema, {
    status: status ? timeStatusToProto(status.spec) : undefined,
  });
  if (req.server.trim() === "") return response;
  let host: string;
  try {
    host = parseTimeServer(req.server);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message, {
      context: { rpc: "Time", server: req.server },
      cause: e,
    });
  }
  authorizeTimeServer(ctx.values.get(callerKey)?.role ?? "os:reader", host, timeServers(deps));
  if (!deps.timeQuerier) {
    throw new UnimplementedError(
      "Time with a server is not available: this machined runs without an SNTP client",
      { context: { rpc: "Time", server: req.server } },
    );
  }
  if (!timeBudget.take()) {
    throw new ResourceExhaustedError(
      `Time queries naming a server are limited to ${timeBudget.ratePerSecond} a second ` +
        `on this node (burst ${timeBudget.burst}); try again in ${timeBudget.waitMs()} ms`,
      { context: { rpc: "Time", ratePerSecond: timeBudget.ratePerSecond } },
    );
  }
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(TIME_QUERY_BUDGET.timeoutMs)]);
  try {
    const q = await deps.timeQuerier.query(host, signal);
    response.query = create(TimeQuerySchema, { ...q, server: req.server });
  } catch (e) {
    throw new UnavailableError(
      `Cannot measure the clock against "${req.server}": ${(e as Error).message}`,
      { context: { rpc: "Time", server: req.server }, cause: e },
    );
  }
  return response;
}

/** `machine.time.servers` of the running config (none before one is loaded). */
function timeServers(deps: { readonly store: MachineStore }): readonly string[] {
  const config = deps.store.list(MACHINE_CONFIG).find((r) => r.metadata.id === MACHINE_CONFIG_ID);
  return config?.spec.config.machine.time.servers ?? [];
}

/** argv cut to `max` characters in all; the last kept argument then ends in `...`. Pure. */
export function capArgv(argv: readonly string[], max: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const arg of argv) {
    if (used + arg.length > max) {
      out.push(arg.slice(0, Math.max(0, max - used)) + "...");
      return out;
    }
    out.push(arg);
    used += arg.length;
  }
  return out;
}

function u64Map(r: Readonly<Record<string, number>>): Record<string, bigint> {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, u64(v)]));
}

/** A non-negative count as a proto uint64. */
export function u64(n: number): bigint {
  return BigInt(Math.max(0, Math.round(n)));
}

/** Every number field of `o` as a uint64 (strings and the rest as they are). */
function u64s<T extends object>(o: T): { [K in keyof T]: T[K] extends number ? bigint : T[K] } {
  return Object.fromEntries(
    Object.entries(o).map(([k, v]) => [k, typeof v === "number" ? u64(v) : v]),
  ) as { [K in keyof T]: T[K] extends number ? bigint : T[K] };
}
