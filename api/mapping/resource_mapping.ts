/**
 * The one place where machined's TypeScript resources and the API's typed
 * proto messages meet. Both directions are exhaustive `switch` statements over
 * the closed catalog ending in `assertNever`, so adding a resource type to
 * resources/registry.ts fails type-checking here until it has a proto message.
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
  type Resource as ProtoResource,
  ResourceSchema,
} from "../gen/machined/v1/resources_pb.ts";
import type {
  ConfigStatusSpec,
  ControllerStatusSpec,
  MachineConfigSpec,
  MachineResource,
  MachineResourceOf,
  MachineStatusSpec,
  ResourceType,
} from "../../resources/mod.ts";
import { assertNever } from "../../resources/mod.ts";
import type { Metadata } from "../../runtime/mod.ts";
import type { MachineConfig } from "../../config/schema/machine_config.ts";
import {
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
import { ResourceMappingError } from "./mapping_error.ts";

/** A resource paired with its type at the top level, so `switch` narrows both. */
type Tagged = { [K in ResourceType]: { type: K; resource: MachineResourceOf<K> } }[ResourceType];

/**
 * What the store hands out for a type only known at run time: the same value
 * as a {@link MachineResource}, typed less precisely.
 */
export type AnyMachineResource = MachineResource | MachineResourceOf<ResourceType>;

function tag(resource: AnyMachineResource): Tagged {
  return { type: resource.metadata.type, resource } as Tagged;
}

/** Converts a store resource to its API message (server side). */
export function toProtoResource(resource: AnyMachineResource): ProtoResource {
  const metadata = metadataToProto(resource.metadata);
  const t = tag(resource);
  switch (t.type) {
    case "MachineConfig":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "machineConfig", value: machineConfigToProto(t.resource.spec) },
      });
    case "ConfigStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "configStatus", value: configStatusToProto(t.resource.spec) },
      });
    case "MachineStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "machineStatus", value: machineStatusToProto(t.resource.spec) },
      });
    case "ControllerStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "controllerStatus", value: controllerStatusToProto(t.resource.spec) },
      });
    default:
      return assertNever(t, "resource type");
  }
}

/**
 * Converts an API message back to a resource (client side, e.g. for tables).
 * @throws ResourceMappingError when metadata is missing, the spec is unset, or
 *   the spec does not match `metadata.type`.
 */
export function fromProtoResource(message: ProtoResource): MachineResource {
  if (!message.metadata) throw new ResourceMappingError("metadata", "Resource has no metadata");
  const m = message.metadata;
  const spec = message.spec;
  const expect = (type: ResourceType) => {
    if (m.type !== type) {
      throw new ResourceMappingError(
        "spec",
        `Resource ${m.namespace}/${m.type}/${m.id} carries a ${type} spec`,
      );
    }
  };
  switch (spec.case) {
    case "machineConfig":
      expect("MachineConfig");
      return {
        metadata: metadataFromProto(m, "MachineConfig"),
        spec: machineConfigFromProto(spec.value),
      };
    case "configStatus":
      expect("ConfigStatus");
      return {
        metadata: metadataFromProto(m, "ConfigStatus"),
        spec: configStatusFromProto(spec.value),
      };
    case "machineStatus":
      expect("MachineStatus");
      return {
        metadata: metadataFromProto(m, "MachineStatus"),
        spec: machineStatusFromProto(spec.value),
      };
    case "controllerStatus":
      expect("ControllerStatus");
      return {
        metadata: metadataFromProto(m, "ControllerStatus"),
        spec: controllerStatusFromProto(spec.value),
      };
    case undefined:
      throw new ResourceMappingError(
        "spec",
        `Resource ${m.namespace}/${m.type}/${m.id} has no spec`,
      );
    default:
      return assertNever(spec, "resource spec");
  }
}

function metadataToProto(m: Metadata): ProtoMetadata {
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

function metadataFromProto<T extends ResourceType>(m: ProtoMetadata, type: T): Metadata<T> {
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

function machineConfigToProto(s: MachineConfigSpec): ProtoMachineConfigSpec {
  // JSON round trip drops `undefined` members, which Struct cannot hold.
  const json = JSON.parse(JSON.stringify(s.config)) as JsonObject;
  return create(MachineConfigSpecSchema, {
    source: s.source,
    config: json,
  });
}

function machineConfigFromProto(s: ProtoMachineConfigSpec): MachineConfigSpec {
  const config = s.config ?? {};
  // The server sends only configs that passed parseMachineConfig.
  return { source: s.source, config: config as unknown as MachineConfig };
}

function configStatusToProto(s: ConfigStatusSpec): ProtoConfigStatusSpec {
  return create(ConfigStatusSpecSchema, {
    state: configStateToProto(s.state),
    source: s.source,
    errors: s.errors.map((e) => ({ ...e })),
  });
}

function configStatusFromProto(s: ProtoConfigStatusSpec): ConfigStatusSpec {
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

function machineStatusToProto(s: MachineStatusSpec): ProtoMachineStatusSpec {
  return create(MachineStatusSpecSchema, {
    stage: machineStageToProto(s.stage),
    ready: s.ready,
    unmetConditions: s.unmetConditions.map((c) => ({ name: c.name, reason: c.reason })),
    pid1: s.pid1,
    mode: machineModeToProto(s.mode),
  });
}

function machineStatusFromProto(s: ProtoMachineStatusSpec): MachineStatusSpec {
  return {
    stage: machineStageFromProto(s.stage),
    ready: s.ready,
    unmetConditions: s.unmetConditions.map((c) => ({ name: c.name, reason: c.reason })),
    pid1: s.pid1,
    mode: machineModeFromProto(s.mode),
  };
}

function controllerStatusToProto(s: ControllerStatusSpec): ProtoControllerStatusSpec {
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

function controllerStatusFromProto(s: ProtoControllerStatusSpec): ControllerStatusSpec {
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
