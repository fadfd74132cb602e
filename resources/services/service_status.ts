/**
 * ServiceStatus: what the supervisor observes of one service: its state, health,
 * restarts and last exit. Written by the supervisor only; `machinectl get svc`
 * and the ServiceList RPC read it.
 */
import type { ResourceDescriptor } from "../descriptor.ts";

export const SERVICE_STATUS = "ServiceStatus";

/**
 * A service's life: `waiting` for dependencies, `starting` (spawned, not yet
 * ready), `running`, `stopping`, `backing-off` before a restart, and the two
 * ends `finished` (exited and not restarted, or stopped on request) and
 * `failed` (could not be started, or exited and the policy gives up).
 */
export type ServiceState =
  | "waiting"
  | "starting"
  | "running"
  | "stopping"
  | "finished"
  | "failed"
  | "backing-off";

/**
 * The sandbox the running process is in, read back from /proc/PID/status right
 * after exec (platform/process SandboxInForce): what the kernel enforces, not
 * what was asked for.
 */
export interface ServiceSandboxStatus {
  /** The seccomp profile asked for (`default`, `unconfined` or a configured profile's name). */
  readonly profile: string;
  /** The kernel's seccomp mode: `filter` when a filter is installed. */
  readonly seccomp: "disabled" | "strict" | "filter";
  readonly noNewPrivs: boolean;
  /** Effective capabilities, by name. */
  readonly effective: readonly string[];
  /** The bounding set: the most it or its children can ever hold. */
  readonly bounding: readonly string[];
  /** Ambient capabilities (kept across exec by a non-root service). */
  readonly ambient: readonly string[];
  /** The `read_only_paths` its mountinfo shows mounted read-only. */
  readonly readOnly?: readonly string[];
  /** The `masked_paths` its mountinfo shows hidden (an empty tmpfs or /dev/null over them). */
  readonly masked?: readonly string[];
}

/** How the last process ended. */
export interface ServiceExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** Epoch ms. */
  readonly time: number;
  /** SIGKILL was sent because SIGTERM's grace period ran out. */
  readonly killedAfterGrace: boolean;
}

export interface ServiceStatusSpec {
  readonly state: ServiceState;
  /** Ready for dependents: the health check passes (or, without one, it runs). */
  readonly healthy: boolean;
  /** Restarts since the service was (re)configured or started on request. */
  readonly restarts: number;
  readonly pid: number | null;
  readonly lastExit: ServiceExit | null;
  /** Why it is in this state, e.g. `waiting for "containerd" to be ready`. */
  readonly message: string;
  /** Epoch ms of the last state change. */
  readonly since: number;
  /**
   * Why the service's log file (`/var/log/<id>.log`) cannot be written, e.g.
   * a full disk; empty when it can. Its lines still reach the in-memory ring.
   */
  readonly logFileError: string;
  /**
   * The sandbox in force for the current (or last) process; null before the
   * first start, for a service without one, or when it exited before it was read.
   */
  readonly sandbox: ServiceSandboxStatus | null;
}

export const serviceStatusDescriptor: ResourceDescriptor<typeof SERVICE_STATUS, ServiceStatusSpec> =
  {
    type: SERVICE_STATUS,
    namespace: "runtime",
    aliases: ["servicestatus", "servicestatuses", "services", "service", "svc"],
    description: "State, health and restarts of a supervised service",
    columns: [
      { header: "STATE", value: (s) => s.state },
      { header: "HEALTHY", value: (s) => String(s.healthy) },
      { header: "RESTARTS", value: (s) => String(s.restarts) },
      { header: "PID", value: (s) => (s.pid === null ? "" : String(s.pid)) },
      { header: "SECCOMP", value: (s) => s.sandbox?.profile ?? "" },
      { header: "MESSAGE", value: (s) => s.message },
    ],
  };
