/**
 * The observability RPCs (Memory, Stats, ...): what an operator reaches for
 * when something is wrong on a node with no shell. They read /proc through
 * machined's {@link Observer}; all are reader RPCs and change nothing.
 * Without an observer they answer Unimplemented.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import {
  type MachineService,
  MemoryResponseSchema,
  StatsResponseSchema,
} from "../gen/machined/v1/machine_pb.ts";
import type { Observer } from "../../observe/mod.ts";
import { ProcError } from "../../platform/procfs/mod.ts";

/** The dependency of these handlers. */
export interface ObserveDeps {
  /** /proc joined with machined's services (Memory, Stats...). */
  readonly observer?: Observer;
}

type ObserveMethods = "memory" | "stats";

/** The handlers of the observability RPCs. */
export function createObserveHandlers(
  deps: ObserveDeps,
): Pick<ServiceImpl<typeof MachineService>, ObserveMethods> {
  const observer = (rpc: string) => {
    if (deps.observer) return deps.observer;
    throw new ConnectError(
      `${rpc} is not available: this machined runs without an observer`,
      Code.Unimplemented,
    );
  };
  return {
    async memory() {
      const r = await procCall(() => observer("Memory").memory());
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
    },

    async stats() {
      const r = await procCall(() => observer("Stats").stats());
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
    },
  };
}

/** A /proc read that fails answers Unavailable with the path; anything else propagates. */
async function procCall<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof ProcError) {
      throw new ConnectError(e.message, Code.Unavailable, undefined, undefined, e);
    }
    throw e;
  }
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
