/**
 * The service supervisor: runs the services of the machine config (and the
 * built-in containerd) in dependency order, gates dependents on readiness
 * probes, restarts by policy with capped backoff, stops gracefully, captures
 * output into rings and rotated files, and publishes ServiceStatus.
 *
 * @example
 * ```ts
 * import { createSupervisor } from "./supervisor/mod.ts";
 * import { nativeProcessBackend } from "./platform/process/mod.ts";
 * const supervisor = createSupervisor({ store, process: nativeProcessBackend(), events });
 * supervisor.restart("payload");
 * for await (const line of supervisor.logs("payload", { tail: 20 })) console.log(line.text);
 * await supervisor.close(); // stopAll() in reverse dependency order, then release everything
 * ```
 * @module
 */
export {
  createSupervisor,
  SERVICE_BACKOFF,
  type ServiceInfo,
  Supervisor,
  SUPERVISOR_OWNER,
  type SupervisorDeps,
  UnknownServiceError,
} from "./supervisor.ts";
export {
  formatLine,
  type LogReadOptions,
  MACHINED_LOG_ID,
  ServiceLogs,
  type ServiceLogsOptions,
  UnknownLogError,
} from "./service_logs.ts";
export { RotatingLogFile, type RotationOptions } from "./rotating_log_file.ts";
export { createProber, type ProbeContext, ProbeError, type Prober } from "./probes.ts";
export { findCycles, startLayers, stopLayers } from "./dependency_graph.ts";
export { DEFAULT_PATH, processSandbox } from "./launch_service.ts";
export { UnknownAccountError } from "./user_lookup.ts";
