/**
 * Turns the machine config into ServiceSpec resources: one per entry of
 * `machine.services`, plus the built-in `containerd` when
 * `machine.runtime.containerd.enabled`, whose readiness is its CRI probe.
 * With `trustedRoots` (a node, dev mode) every service gets the CA bundle as
 * SSL_CERT_FILE and DENO_CERT, no spec is written before the bundle is
 * (TrustedRootsStatus), and containerd and services with
 * `restart_on_trusted_roots` carry the bundle's hash, so a new bundle restarts them.
 * Inputs: MachineConfig, TrustedRootsStatus. Output: ServiceSpec (namespace `runtime`).
 */
import type { OciSeccompProfile } from "../../platform/process/mod.ts";
import type { MachineConfig, ServiceConfig } from "../../config/mod.ts";
import {
  containerdConfigToml,
  type ContainerdPaths,
  DEFAULT_CONTAINERD_PATHS,
} from "../../cri/mod.ts";
import {
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
  type MachineController,
  SERVICE_SPEC,
  type ServiceSpecSpec,
  TRUSTED_ROOTS_STATUS,
  TRUSTED_ROOTS_STATUS_ID,
} from "../../resources/mod.ts";

/** The id of the built-in container runtime service. */
export const CONTAINERD_SERVICE_ID = "containerd";

/** Options of {@link serviceSpecController}. */
export interface ServiceSpecControllerOptions {
  /** Where containerd lives on this node (temp dirs in dev mode and tests). */
  readonly containerd?: Partial<ContainerdPaths>;
  /**
   * Point services at the node's CA bundle (trust.TrustedRootsController writes it). Unset:
   * services get no SSL_CERT_FILE and are not held for the bundle. @default unset
   */
  readonly trustedRoots?: { readonly bundlePath: string };
}

/** The CA bundle as services see it: where, and its hash. */
export interface ServiceTrust {
  readonly bundlePath: string;
  readonly sha256: string;
}

/** Config → ServiceSpec. */
export function serviceSpecController(
  options: ServiceSpecControllerOptions = {},
): MachineController {
  const paths = { ...DEFAULT_CONTAINERD_PATHS, ...options.containerd };
  return {
    name: "runtime.ServiceSpecController",
    inputs: [
      { type: MACHINE_CONFIG, kind: "weak", namespace: "config", id: MACHINE_CONFIG_ID },
      {
        type: TRUSTED_ROOTS_STATUS,
        kind: "weak",
        namespace: "runtime",
        id: TRUSTED_ROOTS_STATUS_ID,
      },
    ],
    outputs: [{ type: SERVICE_SPEC, kind: "exclusive" }],
    async reconcile(ctx) {
      const config = ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
      if (!config) return;
      let trust: ServiceTrust | undefined;
      if (options.trustedRoots) {
        const bundle = ctx.find(TRUSTED_ROOTS_STATUS, "runtime", TRUSTED_ROOTS_STATUS_ID)?.spec;
        if (!bundle) return; // held until the bundle exists: no service starts without it
        trust = { bundlePath: options.trustedRoots.bundlePath, sha256: bundle.sha256 };
      }
      for (const [id, spec] of serviceSpecsFromConfig(config, paths, trust)) {
        await ctx.apply({ type: SERVICE_SPEC, namespace: "runtime", id }, spec);
      }
    },
  };
}

/** Every ServiceSpec the config asks for, by id. Pure. */
export function serviceSpecsFromConfig(
  config: MachineConfig,
  paths: ContainerdPaths = DEFAULT_CONTAINERD_PATHS,
  trust?: ServiceTrust,
): Map<string, ServiceSpecSpec> {
  const out = new Map<string, ServiceSpecSpec>();
  const containerd = config.machine.runtime.containerd;
  if (containerd.enabled) {
    const spec = containerdServiceSpec(paths, containerd.socket, containerd.config_extra);
    out.set(CONTAINERD_SERVICE_ID, withTrust(spec, trust, true));
  }
  for (const s of config.machine.services) {
    const spec = fromServiceConfig(s, config.machine.seccomp_profiles);
    out.set(s.id, withTrust(spec, trust, s.restart_on_trusted_roots));
  }
  return out;
}

/** The variables naming the CA bundle: OpenSSL, Go, Python, curl and the like; Deno. */
export const TRUST_ENV = ["SSL_CERT_FILE", "DENO_CERT"] as const;

/**
 * `spec` pointed at the bundle (a variable the service sets itself wins) and, when `restart`,
 * carrying its hash. Pure.
 */
export function withTrust(
  spec: ServiceSpecSpec,
  trust: ServiceTrust | undefined,
  restart: boolean,
): ServiceSpecSpec {
  if (!trust) return spec;
  const env = Object.fromEntries(TRUST_ENV.map((k) => [k, trust.bundlePath]));
  return {
    ...spec,
    env: { ...env, ...spec.env },
    ...(restart ? { trustedRootsSha256: trust.sha256 } : {}),
  };
}

/**
 * containerd's sandbox: none. It and the runc and shims it starts mount,
 * create namespaces, set cgroups and seccomp filters for containers and need
 * every capability; no_new_privs would be inherited by every container and
 * break setuid programs inside them. Containers get their own confinement
 * from the CRI (RuntimeDefault seccomp, their capability set).
 */
export const CONTAINERD_SANDBOX = {
  seccomp: "unconfined",
  capabilities: null,
  noNewPrivs: false,
} as const satisfies ServiceSpecSpec["sandbox"];

/**
 * containerd as a service: its config written before each start, restarted when
 * its CRI API stops answering (a wedged runtime is as bad as a dead one).
 */
export function containerdServiceSpec(
  paths: ContainerdPaths,
  socket: string,
  extra: string,
): ServiceSpecSpec {
  return {
    command: [paths.binary, "--config", paths.configPath],
    env: {},
    cwd: "/",
    user: 0,
    group: 0,
    dependsOn: [],
    restart: "always",
    stopGraceMs: 10_000,
    onDependencyRestart: "restart",
    health: {
      probe: { kind: "cri", socket },
      intervalMs: 1000,
      startIntervalMs: 50,
      timeoutMs: 2000,
      startPeriodMs: 30_000,
      successThreshold: 1,
      failureThreshold: 5,
      restartWhenUnhealthy: true,
    },
    limits: {},
    files: [{
      path: paths.configPath,
      content: containerdConfigToml(paths, socket, extra),
      mode: 0o644,
    }],
    dirs: [paths.root, paths.state, socket.replace(/\/[^/]*$/, "") || "/"],
    builtin: true,
    sandbox: CONTAINERD_SANDBOX,
  };
}

function fromServiceConfig(
  s: ServiceConfig,
  profiles: Readonly<Record<string, OciSeccompProfile>>,
): ServiceSpecSpec {
  const h = s.health;
  const probe = h?.exec
    ? { kind: "exec" as const, command: h.exec.command }
    : h?.tcp
    ? { kind: "tcp" as const, address: h.tcp.address }
    : h?.http
    ? { kind: "http" as const, url: h.http.url }
    : undefined;
  return {
    command: s.command,
    env: s.env,
    cwd: s.cwd,
    user: s.user,
    group: s.group,
    dependsOn: s.depends_on,
    restart: s.restart,
    stopGraceMs: s.stop_grace_period,
    onDependencyRestart: s.on_dependency_restart,
    ...(h && probe
      ? {
        health: {
          probe,
          intervalMs: h.interval,
          timeoutMs: h.timeout,
          startPeriodMs: h.start_period,
          successThreshold: h.success_threshold,
          failureThreshold: h.failure_threshold,
          restartWhenUnhealthy: false,
        },
      }
      : {}),
    limits: {
      ...(s.limits.memory_max !== undefined ? { memoryMax: s.limits.memory_max } : {}),
      ...(s.limits.cpu_max !== undefined ? { cpuMax: s.limits.cpu_max } : {}),
      ...(s.limits.pids_max !== undefined ? { pidsMax: s.limits.pids_max } : {}),
    },
    files: [],
    dirs: [],
    builtin: false,
    sandbox: {
      seccomp: s.sandbox.seccomp,
      ...(profiles[s.sandbox.seccomp] ? { profile: profiles[s.sandbox.seccomp] } : {}),
      capabilities: s.sandbox.capabilities,
      noNewPrivs: s.sandbox.no_new_privs,
      ...(s.sandbox.read_only_paths.length > 0 ? { readOnlyPaths: s.sandbox.read_only_paths } : {}),
      ...(s.sandbox.masked_paths.length > 0 ? { maskedPaths: s.sandbox.masked_paths } : {}),
    },
  };
}
