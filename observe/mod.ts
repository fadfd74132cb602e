/**
 * Observing a node: memory, processes, system counters, read from /proc and
 * joined with machined's own knowledge (services, apid). The API's
 * observability RPCs answer from an {@link Observer}.
 *
 * @example
 * ```ts
 * import { Observer } from "./observe/mod.ts";
 * import { NativeProcBackend } from "./platform/procfs/mod.ts";
 * const observer = new Observer({ proc: new NativeProcBackend() });
 * console.log((await observer.memory()).meminfo.availableBytes);
 * ```
 * @module
 */
export {
  type CpuReport,
  type MemoryReport,
  Observer,
  type ObserverDeps,
  type OwnedProcessInfo,
  type ProcessReport,
  type SocketOwnerReport,
  type StatsReport,
} from "./observer.ts";
export { type CgroupReport, type MountReport, type SocketReport } from "./views.ts";
export { assignOwners, type OwnedProcess, type OwnerHints } from "./owners.ts";
export { type Sample, Sampler } from "./sampler.ts";
