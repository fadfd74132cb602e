/**
 * Read-only parsers of /proc (and cgroupfs) for the observability RPCs:
 * memory, processes, system counters. {@link NativeProcBackend} reads the
 * real tree; {@link FakeProcBackend} is a tree in memory for tests.
 *
 * @example
 * ```ts
 * import { NativeProcBackend, readMeminfo } from "./platform/procfs/mod.ts";
 * console.log((await readMeminfo(new NativeProcBackend())).availableBytes);
 * ```
 * @module
 */
export { CLOCK_TICKS, isProcDenied, isProcGone, type ProcBackend, ProcError } from "./backend.ts";
export { NativeProcBackend } from "./backend_native.ts";
export { FakeProcBackend, type FakeProcess } from "./backend_fake.ts";
export { type MemInfo, parseMeminfo, readMeminfo } from "./meminfo.ts";
export {
  kbToBytes,
  listPids,
  parseCgroupV2,
  parseKeyValues,
  parseStat,
  type ProcessInfo,
  readProcess,
  readProcesses,
} from "./process.ts";
export {
  type CpuTimes,
  cpuUsagePercent,
  type DiskStats,
  type KernelStat,
  type LoadAverage,
  type NetDevStats,
  parseDiskstats,
  parseKernelStat,
  parseLoadavg,
  parseNetDev,
  parseUptime,
  readSystemStats,
  type SystemStats,
} from "./system_stats.ts";
export {
  parseProcNetAddress,
  parseSocketTable,
  readSockets,
  SOCKET_PROTOCOLS,
  type SocketInfo,
  socketOwners,
  type SocketProtocol,
} from "./net_sockets.ts";
export { type CgroupStats, parseFlatKeyed, parseLimit, readCgroupStats } from "./cgroup_stats.ts";
export { type FsUsage, type FsUsageReader, nativeFsUsage } from "./fs_usage.ts";
