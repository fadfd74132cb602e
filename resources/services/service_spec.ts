/**
 * ServiceSpec: one service machined should supervise, derived from the machine
 * config (`machine.services` plus the built-in `containerd`). The supervisor
 * watches these and reconciles its processes to them; a changed spec restarts
 * the service with the new one.
 */
import type { OciSeccompProfile } from "../../platform/process/mod.ts";
import type { ResourceDescriptor } from "../descriptor.ts";

export const SERVICE_SPEC = "ServiceSpec";

/** How the supervisor tells whether a running service is ready. */
export type HealthProbeSpec =
  /** Run a command in the service's context; exit 0 passes. */
  | { readonly kind: "exec"; readonly command: readonly string[] }
  /** A TCP connect to `host:port` succeeds. */
  | { readonly kind: "tcp"; readonly address: string }
  /** An HTTP GET answers 2xx or 3xx. */
  | { readonly kind: "http"; readonly url: string }
  /** A CRI runtime on `socket` reports RuntimeReady (containerd). */
  | { readonly kind: "cri"; readonly socket: string };

/** A readiness probe with its timing; durations in ms. */
export interface HealthSpec {
  readonly probe: HealthProbeSpec;
  readonly intervalMs: number;
  /**
   * Interval used before the first pass while within the start period, so a
   * service that comes up fast is ready fast (Docker's `start_interval`).
   * Defaults to `intervalMs`.
   */
  readonly startIntervalMs?: number;
  readonly timeoutMs: number;
  readonly startPeriodMs: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
  /**
   * Restart the service when the probe keeps failing (`failureThreshold` in a
   * row). Off for configured services (their probe is readiness only); on for
   * containerd, where "not answering" means wedged.
   */
  readonly restartWhenUnhealthy: boolean;
}

/** cgroup v2 limits, in the kernel's file formats. */
export interface ServiceLimits {
  /** `memory.max` in bytes. */
  readonly memoryMax?: number;
  /** `cpu.max`, e.g. `"50000 100000"`. */
  readonly cpuMax?: string;
  /** `pids.max`. */
  readonly pidsMax?: number;
}

/**
 * The sandbox a service's processes (and its exec probes) run in, applied by
 * native-ops between fork and exec.
 */
export interface ServiceSandboxSpec {
  /**
   * `default`: the deny-list filter (docs/hardening.md); `unconfined`: none; otherwise the name
   * of a `machine.seccomp_profiles` entry, carried in {@link profile}.
   */
  readonly seccomp: string;
  /** The OCI profile `seccomp` names (so a changed profile changes the spec and restarts it). */
  readonly profile?: OciSeccompProfile;
  /**
   * Capabilities kept (`CAP_*` names); every other one leaves all five sets.
   * `null` keeps what machined has (containerd).
   */
  readonly capabilities: readonly string[] | null;
  /** PR_SET_NO_NEW_PRIVS: setuid binaries and file capabilities grant nothing. */
  readonly noNewPrivs: boolean;
  /** Paths bound read-only onto themselves in the service's own mount namespace. */
  readonly readOnlyPaths?: readonly string[];
  /** Paths hidden in the same namespace (empty read-only tmpfs, or /dev/null). */
  readonly maskedPaths?: readonly string[];
}

/** A file written (atomically) before each start, e.g. containerd's config.toml. */
export interface ServiceFile {
  readonly path: string;
  readonly content: string;
  /** @default 0o644 */
  readonly mode?: number;
}

export interface ServiceSpecSpec {
  /** argv; argv[0] is absolute. */
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** A numeric id or a name looked up in /etc/passwd at start. */
  readonly user: number | string;
  readonly group: number | string;
  readonly dependsOn: readonly string[];
  readonly restart: "always" | "on-failure" | "never";
  readonly stopGraceMs: number;
  readonly onDependencyRestart: "restart" | "hold";
  readonly health?: HealthSpec;
  readonly limits: ServiceLimits;
  /** Files to write before every start. */
  readonly files: readonly ServiceFile[];
  /** Directories to create before every start. */
  readonly dirs: readonly string[];
  /** True for services machined provides itself (containerd). */
  readonly builtin: boolean;
  /**
   * The SHA-256 of the CA bundle (TrustedRootsStatus) it runs against: containerd and services
   * with `restart_on_trusted_roots` carry it, so a changed bundle is a changed spec and restarts
   * them. Absent for the rest, which keep running and read the bundle whenever they open it.
   */
  readonly trustedRootsSha256?: string;
  /** Its sandbox; unset: none (no filter, capabilities as machined's, as before issue 32). */
  readonly sandbox?: ServiceSandboxSpec;
}

export const serviceSpecDescriptor: ResourceDescriptor<typeof SERVICE_SPEC, ServiceSpecSpec> = {
  type: SERVICE_SPEC,
  namespace: "runtime",
  aliases: ["servicespec", "servicespecs"],
  description: "A service machined supervises, as configured",
  columns: [
    { header: "COMMAND", value: (s) => s.command.join(" ") },
    { header: "DEPENDS", value: (s) => s.dependsOn.join(",") },
    { header: "RESTART", value: (s) => s.restart },
    { header: "HEALTH", value: (s) => s.health?.probe.kind ?? "" },
    { header: "SECCOMP", value: (s) => s.sandbox?.seccomp ?? "unconfined" },
  ],
};
