/**
 * Metadata and the config and runtime core specs (MachineConfig,
 * ConfigStatus, MachineStatus, ControllerStatus) ⇄ their proto messages in
 * resources.proto.
 */
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type ConfigStatusSpec as ProtoConfigStatusSpec,
  ConfigStatusSpecSchema,
  type ControllerStatusSpec as ProtoControllerStatusSpec,
  ControllerStatusSpecSchema,
  type MachineConfigSpec as ProtoMachineConfigSpec,
  MachineConfigSpecSchema,
  type MachineStatusSpec as ProtoMachineStatusSpec,
  MachineStatusSpecSchema,
  type Metadata as ProtoMetadata,
  MetadataSchema,
} from "../gen/machined/v1/resources_pb.ts";
import type {
  ConfigPending,
  ConfigStatusSpec,
  ControllerStatusSpec,
  MachineConfigSpec,
  MachineStatusSpec,
  ResourceType,
} from "../../resources/mod.ts";
import type { Metadata } from "../../runtime/mod.ts";
import type { MachineConfig } from "../../config/mod.ts";
import {
  applyModeFromProto,
  applyModeToProto,
  configStateFromProto,
  configStateToProto,
  controllerStateFromProto,
  controllerStateToProto,
  machineModeFromProto,
  machineModeToProto,
  machineStageFromProto,
  machineStageToProto,
  phaseFromProto,
  phaseToProto,
} from "./enum_mapping.ts";

/** Store metadata → proto. */
export function metadataToProto(m: Metadata): ProtoMetadata {
  return create(MetadataSchema, {
    namespace: m.namespace,
    type: m.type,
    id: m.id,
    version: BigInt(m.version),
    owner: m.owner,
    phase: phaseToProto(m.phase),
    finalizers: [...m.finalizers],
    labels: { ...m.labels },
    created: timestampFromDate(m.created),
    updated: timestampFromDate(m.updated),
  });
}

/** Proto metadata → store metadata of `type`. */
export function metadataFromProto<T extends ResourceType>(m: ProtoMetadata, type: T): Metadata<T> {
  return {
    namespace: m.namespace,
    type,
    id: m.id,
    version: Number(m.version),
    owner: m.owner,
    phase: phaseFromProto(m.phase),
    finalizers: [...m.finalizers],
    labels: { ...m.labels },
    created: m.created ? timestampDate(m.created) : new Date(0),
    updated: m.updated ? timestampDate(m.updated) : new Date(0),
  };
}

/** MachineConfig → proto (the config as a Struct). */
export function machineConfigToProto(s: MachineConfigSpec): ProtoMachineConfigSpec {
  // JSON round trip drops `undefined` members, which Struct cannot hold.
  const json = JSON.parse(JSON.stringify(s.config)) as JsonObject;
  return create(MachineConfigSpecSchema, {
    source: s.source,
    config: json,
    ...(s.pending ? { pending: pendingToProto(s.pending) } : {}),
    sha256: s.sha256 ?? "",
    ...(s.document === undefined
      ? {}
      : { document: JSON.parse(JSON.stringify(s.document)) as JsonObject }),
  });
}

function pendingToProto(p: ConfigPending) {
  return {
    mode: applyModeToProto(p.mode),
    changed: [...p.changed],
    ...(p.deadline ? { deadline: timestampFromDate(new Date(p.deadline)) } : {}),
  };
}

/** Proto → MachineConfig. */
export function machineConfigFromProto(s: ProtoMachineConfigSpec): MachineConfigSpec {
  const config = s.config ?? {};
  // The server sends only configs that passed parseMachineConfig.
  const p = s.pending;
  const mode = p ? applyModeFromProto(p.mode) : undefined;
  return {
    source: s.source,
    config: config as unknown as MachineConfig,
    ...(s.sha256 ? { sha256: s.sha256 } : {}),
    ...(s.document ? { document: s.document } : {}),
    ...(p && (mode === "try" || mode === "staged")
      ? {
        pending: {
          mode,
          changed: [...p.changed],
          ...(p.deadline ? { deadline: timestampDate(p.deadline).toISOString() } : {}),
        },
      }
      : {}),
  };
}

/** ConfigStatus → proto. */
export function configStatusToProto(s: ConfigStatusSpec): ProtoConfigStatusSpec {
  return create(ConfigStatusSpecSchema, {
    state: configStateToProto(s.state),
    source: s.source,
    errors: s.errors.map((e) => ({ ...e })),
  });
}

/** Proto → ConfigStatus. */
export function configStatusFromProto(s: ProtoConfigStatusSpec): ConfigStatusSpec {
  return {
    state: configStateFromProto(s.state),
    source: s.source,
    errors: s.errors.map((e) => ({
      path: e.path,
      line: e.line,
      column: e.column,
      message: e.message,
      ...(e.hint !== undefined ? { hint: e.hint } : {}),
    })),
  };
}

/** MachineStatus → proto. */
export function machineStatusToProto(s: MachineStatusSpec): ProtoMachineStatusSpec {
  return create(MachineStatusSpecSchema, {
    stage: machineStageToProto(s.stage),
    ready: s.ready,
    unmetConditions: s.unmetConditions.map((c) => ({ name: c.name, reason: c.reason })),
    pid1: s.pid1,
    mode: machineModeToProto(s.mode),
  });
}

/** Proto → MachineStatus. */
export function machineStatusFromProto(s: ProtoMachineStatusSpec): MachineStatusSpec {
  return {
    stage: machineStageFromProto(s.stage),
    ready: s.ready,
    unmetConditions: s.unmetConditions.map((c) => ({ name: c.name, reason: c.reason })),
    pid1: s.pid1,
    mode: machineModeFromProto(s.mode),
  };
}

/** ControllerStatus → proto. */
export function controllerStatusToProto(s: ControllerStatusSpec): ProtoControllerStatusSpec {
  return create(ControllerStatusSpecSchema, {
    state: controllerStateToProto(s.state),
    reconciles: BigInt(s.reconciles),
    failures: BigInt(s.failures),
    consecutiveFailures: BigInt(s.consecutiveFailures),
    lastError: s.lastError,
    lastReconcile: s.lastReconcile,
    lastDurationMs: s.lastDurationMs,
    inputs: [...s.inputs],
    outputs: [...s.outputs],
  });
}

/** Proto → ControllerStatus. */
export function controllerStatusFromProto(s: ProtoControllerStatusSpec): ControllerStatusSpec {
  return {
    state: controllerStateFromProto(s.state),
    reconciles: Number(s.reconciles),
    failures: Number(s.failures),
    consecutiveFailures: Number(s.consecutiveFailures),
    lastError: s.lastError,
    lastReconcile: s.lastReconcile,
    lastDurationMs: s.lastDurationMs,
    inputs: [...s.inputs],
    outputs: [...s.outputs],
  };
}
