/**
 * Service supervisor resource specs ⇄ their proto messages
 * (api/proto/machined/v1/services.proto): unions become oneofs and enums,
 * `null` becomes an unset field.
 */
import { create } from "@bufbuild/protobuf";
import * as pb from "../gen/machined/v1/services_pb.ts";
import { type ServiceInfo, ServiceInfoSchema } from "../gen/machined/v1/machine_pb.ts";
import type {
  HealthProbeSpec,
  HealthSpec,
  RuntimeStatusSpec,
  ServiceSpecSpec,
  ServiceState,
  ServiceStatusSpec,
} from "../../resources/mod.ts";
import { assertNever } from "../../resources/mod.ts";
import { enumPair } from "./enum_pair.ts";
import {
  sandboxSpecFromProto,
  sandboxSpecToProto,
  sandboxStatusFromProto,
  sandboxStatusToProto,
} from "./sandbox_mapping.ts";
import { ResourceMappingError } from "./mapping_error.ts";

const restart = enumPair<ServiceSpecSpec["restart"], pb.RestartPolicy>({
  always: pb.RestartPolicy.ALWAYS,
  "on-failure": pb.RestartPolicy.ON_FAILURE,
  never: pb.RestartPolicy.NEVER,
}, "restart policy");
const depRestart = enumPair<ServiceSpecSpec["onDependencyRestart"], pb.DependencyRestartPolicy>({
  restart: pb.DependencyRestartPolicy.RESTART,
  hold: pb.DependencyRestartPolicy.HOLD,
}, "dependency restart policy");
const state = enumPair<ServiceState, pb.ServiceState>({
  waiting: pb.ServiceState.WAITING,
  starting: pb.ServiceState.STARTING,
  running: pb.ServiceState.RUNNING,
  stopping: pb.ServiceState.STOPPING,
  finished: pb.ServiceState.FINISHED,
  failed: pb.ServiceState.FAILED,
  "backing-off": pb.ServiceState.BACKING_OFF,
}, "service state");

function probeToProto(p: HealthProbeSpec): pb.HealthSpec["probe"] {
  switch (p.kind) {
    case "exec":
      return { case: "exec", value: create(pb.ExecProbeSchema, { command: [...p.command] }) };
    case "tcp":
      return { case: "tcp", value: create(pb.TcpProbeSchema, { address: p.address }) };
    case "http":
      return { case: "http", value: create(pb.HttpProbeSchema, { url: p.url }) };
    case "cri":
      return { case: "cri", value: create(pb.CriProbeSchema, { socket: p.socket }) };
    default:
      return assertNever(p, "health probe");
  }
}

function probeFromProto(p: pb.HealthSpec["probe"]): HealthProbeSpec {
  switch (p.case) {
    case "exec":
      return { kind: "exec", command: [...p.value.command] };
    case "tcp":
      return { kind: "tcp", address: p.value.address };
    case "http":
      return { kind: "http", url: p.value.url };
    case "cri":
      return { kind: "cri", socket: p.value.socket };
    case undefined:
      throw new ResourceMappingError("health.probe", "Health check has no probe");
    default:
      return assertNever(p, "health probe");
  }
}

function healthToProto(h: HealthSpec): pb.HealthSpec {
  const { probe, ...timing } = h;
  return create(pb.HealthSpecSchema, { probe: probeToProto(probe), ...timing });
}

function healthFromProto(h: pb.HealthSpec): HealthSpec {
  return {
    probe: probeFromProto(h.probe),
    intervalMs: h.intervalMs,
    timeoutMs: h.timeoutMs,
    startPeriodMs: h.startPeriodMs,
    successThreshold: h.successThreshold,
    failureThreshold: h.failureThreshold,
    restartWhenUnhealthy: h.restartWhenUnhealthy,
  };
}

/** ServiceSpec → proto. */
export function serviceSpecToProto(s: ServiceSpecSpec): pb.ServiceSpecSpec {
  return create(pb.ServiceSpecSpecSchema, {
    command: [...s.command],
    env: { ...s.env },
    cwd: s.cwd,
    user: typeof s.user === "number"
      ? { case: "uid", value: s.user }
      : { case: "userName", value: s.user },
    group: typeof s.group === "number"
      ? { case: "gid", value: s.group }
      : { case: "groupName", value: s.group },
    dependsOn: [...s.dependsOn],
    restart: restart.to(s.restart),
    stopGraceMs: s.stopGraceMs,
    onDependencyRestart: depRestart.to(s.onDependencyRestart),
    health: s.health ? healthToProto(s.health) : undefined,
    limits: {
      memoryMax: s.limits.memoryMax === undefined ? undefined : BigInt(s.limits.memoryMax),
      cpuMax: s.limits.cpuMax,
      pidsMax: s.limits.pidsMax,
    },
    files: s.files.map((f) => ({ path: f.path, content: f.content, mode: f.mode })),
    dirs: [...s.dirs],
    builtin: s.builtin,
    trustedRootsSha256: s.trustedRootsSha256,
    sandbox: s.sandbox ? sandboxSpecToProto(s.sandbox) : undefined,
  });
}

/** Proto → ServiceSpec. @throws ResourceMappingError for a missing user/group or probe. */
export function serviceSpecFromProto(m: pb.ServiceSpecSpec): ServiceSpecSpec {
  if (m.user.case === undefined) throw new ResourceMappingError("user", "Service has no user");
  if (m.group.case === undefined) throw new ResourceMappingError("group", "Service has no group");
  const limits = m.limits;
  return {
    command: [...m.command],
    env: { ...m.env },
    cwd: m.cwd,
    user: m.user.value,
    group: m.group.value,
    dependsOn: [...m.dependsOn],
    restart: restart.from(m.restart),
    stopGraceMs: m.stopGraceMs,
    onDependencyRestart: depRestart.from(m.onDependencyRestart),
    ...(m.health ? { health: healthFromProto(m.health) } : {}),
    limits: {
      ...(limits?.memoryMax !== undefined ? { memoryMax: Number(limits.memoryMax) } : {}),
      ...(limits?.cpuMax !== undefined ? { cpuMax: limits.cpuMax } : {}),
      ...(limits?.pidsMax !== undefined ? { pidsMax: limits.pidsMax } : {}),
    },
    files: m.files.map((f) => ({
      path: f.path,
      content: f.content,
      ...(f.mode !== undefined ? { mode: f.mode } : {}),
    })),
    dirs: [...m.dirs],
    builtin: m.builtin,
    ...(m.trustedRootsSha256 !== undefined ? { trustedRootsSha256: m.trustedRootsSha256 } : {}),
    ...(m.sandbox ? { sandbox: sandboxSpecFromProto(m.sandbox) } : {}),
  };
}

/** ServiceStatus → proto. */
export function serviceStatusToProto(s: ServiceStatusSpec): pb.ServiceStatusSpec {
  return create(pb.ServiceStatusSpecSchema, {
    state: state.to(s.state),
    healthy: s.healthy,
    restarts: s.restarts,
    pid: s.pid ?? undefined,
    lastExit: s.lastExit
      ? {
        code: s.lastExit.code ?? undefined,
        signal: s.lastExit.signal ?? undefined,
        time: s.lastExit.time,
        killedAfterGrace: s.lastExit.killedAfterGrace,
      }
      : undefined,
    message: s.message,
    since: s.since,
    logFileError: s.logFileError,
    sandbox: s.sandbox ? sandboxStatusToProto(s.sandbox) : undefined,
  });
}

/** Proto → ServiceStatus. @throws ResourceMappingError for an unknown state. */
export function serviceStatusFromProto(m: pb.ServiceStatusSpec): ServiceStatusSpec {
  return {
    state: state.from(m.state),
    healthy: m.healthy,
    restarts: m.restarts,
    pid: m.pid ?? null,
    lastExit: m.lastExit
      ? {
        code: m.lastExit.code ?? null,
        signal: m.lastExit.signal ?? null,
        time: m.lastExit.time,
        killedAfterGrace: m.lastExit.killedAfterGrace,
      }
      : null,
    message: m.message,
    since: m.since,
    logFileError: m.logFileError,
    sandbox: m.sandbox ? sandboxStatusFromProto(m.sandbox) : null,
  };
}

/** RuntimeStatus → proto. */
export function runtimeStatusToProto(s: RuntimeStatusSpec): pb.RuntimeStatusSpec {
  return create(pb.RuntimeStatusSpecSchema, { ...s });
}

/** Proto → RuntimeStatus. */
export function runtimeStatusFromProto(m: pb.RuntimeStatusSpec): RuntimeStatusSpec {
  return {
    ready: m.ready,
    networkReady: m.networkReady,
    runtimeName: m.runtimeName,
    runtimeVersion: m.runtimeVersion,
    runtimeApiVersion: m.runtimeApiVersion,
    socket: m.socket,
    lastError: m.lastError,
    lastProbe: m.lastProbe,
    lastAnswer: m.lastAnswer,
  };
}

/** A supervised service (id, spec, status) → proto. */
export function serviceInfoToProto(
  s: { id: string; spec: ServiceSpecSpec; status: ServiceStatusSpec },
): ServiceInfo {
  return create(ServiceInfoSchema, {
    id: s.id,
    spec: serviceSpecToProto(s.spec),
    status: serviceStatusToProto(s.status),
  });
}

/** Proto → a supervised service. @throws ResourceMappingError when spec or status is missing. */
export function serviceInfoFromProto(
  m: ServiceInfo,
): { id: string; spec: ServiceSpecSpec; status: ServiceStatusSpec } {
  if (!m.spec) throw new ResourceMappingError("spec", `Service "${m.id}" has no spec`);
  if (!m.status) throw new ResourceMappingError("status", `Service "${m.id}" has no status`);
  return {
    id: m.id,
    spec: serviceSpecFromProto(m.spec),
    status: serviceStatusFromProto(m.status),
  };
}
