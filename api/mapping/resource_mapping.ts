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
import { networkFromProto, networkToProto } from "./network_mapping.ts";
import {
  runtimeStatusFromProto,
  runtimeStatusToProto,
  serviceSpecFromProto,
  serviceSpecToProto,
  serviceStatusFromProto,
  serviceStatusToProto,
} from "./services_mapping.ts";
import {
  kernelModuleStatusFromProto,
  kernelModuleStatusToProto,
  kernelParamStatusFromProto,
  kernelParamStatusToProto,
  timeStatusFromProto,
  timeStatusToProto,
} from "./system_mapping.ts";

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

/**
 * Store resources are immutable (deeply frozen, replaced on change), so each
 * one's message is built once and shared by every Get, List and watcher.
 * Messages handed out must not be mutated.
 */
const converted = new WeakMap<object, ProtoResource>();

/** Converts a store resource to its API message (server side); cached per resource object. */
export function toProtoResource(resource: AnyMachineResource): ProtoResource {
  if (!Object.isFrozen(resource)) return convert(resource);
  let message = converted.get(resource);
  if (!message) converted.set(resource, message = convert(resource));
  return message;
}

function convert(resource: AnyMachineResource): ProtoResource {
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
    case "LinkSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "linkSpec", value: networkToProto.linkSpec(t.resource.spec) },
      });
    case "AddressSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "addressSpec", value: networkToProto.addressSpec(t.resource.spec) },
      });
    case "RouteSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "routeSpec", value: networkToProto.routeSpec(t.resource.spec) },
      });
    case "HostnameSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "hostnameSpec", value: networkToProto.hostnameSpec(t.resource.spec) },
      });
    case "ResolverSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "resolverSpec", value: networkToProto.resolverSpec(t.resource.spec) },
      });
    case "LinkStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "linkStatus", value: networkToProto.linkStatus(t.resource.spec) },
      });
    case "AddressStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "addressStatus", value: networkToProto.addressStatus(t.resource.spec) },
      });
    case "RouteStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "routeStatus", value: networkToProto.routeStatus(t.resource.spec) },
      });
    case "ResolverStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "resolverStatus", value: networkToProto.resolverStatus(t.resource.spec) },
      });
    case "HostnameStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "hostnameStatus", value: networkToProto.hostnameStatus(t.resource.spec) },
      });
    case "DhcpLease":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "dhcpLease", value: networkToProto.dhcpLease(t.resource.spec) },
      });
    case "ServiceSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "serviceSpec", value: serviceSpecToProto(t.resource.spec) },
      });
    case "ServiceStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "serviceStatus", value: serviceStatusToProto(t.resource.spec) },
      });
    case "RuntimeStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "runtimeStatus", value: runtimeStatusToProto(t.resource.spec) },
      });
    case "TimeStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "timeStatus", value: timeStatusToProto(t.resource.spec) },
      });
    case "KernelParamStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "kernelParamStatus", value: kernelParamStatusToProto(t.resource.spec) },
      });
    case "KernelModuleStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "kernelModuleStatus", value: kernelModuleStatusToProto(t.resource.spec) },
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
    case "linkSpec":
      expect("LinkSpec");
      return {
        metadata: metadataFromProto(m, "LinkSpec"),
        spec: networkFromProto.linkSpec(spec.value),
      };
    case "addressSpec":
      expect("AddressSpec");
      return {
        metadata: metadataFromProto(m, "AddressSpec"),
        spec: networkFromProto.addressSpec(spec.value),
      };
    case "routeSpec":
      expect("RouteSpec");
      return {
        metadata: metadataFromProto(m, "RouteSpec"),
        spec: networkFromProto.routeSpec(spec.value),
      };
    case "hostnameSpec":
      expect("HostnameSpec");
      return {
        metadata: metadataFromProto(m, "HostnameSpec"),
        spec: networkFromProto.hostnameSpec(spec.value),
      };
    case "resolverSpec":
      expect("ResolverSpec");
      return {
        metadata: metadataFromProto(m, "ResolverSpec"),
        spec: networkFromProto.resolverSpec(spec.value),
      };
    case "linkStatus":
      expect("LinkStatus");
      return {
        metadata: metadataFromProto(m, "LinkStatus"),
        spec: networkFromProto.linkStatus(spec.value),
      };
    case "addressStatus":
      expect("AddressStatus");
      return {
        metadata: metadataFromProto(m, "AddressStatus"),
        spec: networkFromProto.addressStatus(spec.value),
      };
    case "routeStatus":
      expect("RouteStatus");
      return {
        metadata: metadataFromProto(m, "RouteStatus"),
        spec: networkFromProto.routeStatus(spec.value),
      };
    case "resolverStatus":
      expect("ResolverStatus");
      return {
        metadata: metadataFromProto(m, "ResolverStatus"),
        spec: networkFromProto.resolverStatus(spec.value),
      };
    case "hostnameStatus":
      expect("HostnameStatus");
      return {
        metadata: metadataFromProto(m, "HostnameStatus"),
        spec: networkFromProto.hostnameStatus(spec.value),
      };
    case "dhcpLease":
      expect("DhcpLease");
      return {
        metadata: metadataFromProto(m, "DhcpLease"),
        spec: networkFromProto.dhcpLease(spec.value),
      };
    case "serviceSpec":
      expect("ServiceSpec");
      return {
        metadata: metadataFromProto(m, "ServiceSpec"),
        spec: serviceSpecFromProto(spec.value),
      };
    case "serviceStatus":
      expect("ServiceStatus");
      return {
        metadata: metadataFromProto(m, "ServiceStatus"),
        spec: serviceStatusFromProto(spec.value),
      };
    case "runtimeStatus":
      expect("RuntimeStatus");
      return {
        metadata: metadataFromProto(m, "RuntimeStatus"),
        spec: runtimeStatusFromProto(spec.value),
      };
    case "timeStatus":
      expect("TimeStatus");
      return {
        metadata: metadataFromProto(m, "TimeStatus"),
        spec: timeStatusFromProto(spec.value),
      };
    case "kernelParamStatus":
      expect("KernelParamStatus");
      return {
        metadata: metadataFromProto(m, "KernelParamStatus"),
        spec: kernelParamStatusFromProto(spec.value),
      };
    case "kernelModuleStatus":
      expect("KernelModuleStatus");
      return {
        metadata: metadataFromProto(m, "KernelModuleStatus"),
        spec: kernelModuleStatusFromProto(spec.value),
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
