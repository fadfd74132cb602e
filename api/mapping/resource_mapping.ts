/**
 * The one place where machined's TypeScript resources and the API's typed
 * proto messages meet. Both directions go through one table typed
 * `{ [K in ResourceType]: SpecMapping<K> }`, and the spec's `oneof` cases are
 * pinned equal to the catalog's names, so adding a resource type to
 * resources/registry.ts (or a spec case to the proto) fails type-checking here
 * until it is mapped.
 */
import { create } from "@bufbuild/protobuf";
import { type Resource as ProtoResource, ResourceSchema } from "../gen/machined/v1/resources_pb.ts";
import type { MachineResource, MachineResourceOf, ResourceType } from "../../resources/mod.ts";
import {
  configStatusFromProto,
  configStatusToProto,
  controllerStatusFromProto,
  controllerStatusToProto,
  machineConfigFromProto,
  machineConfigToProto,
  machineStatusFromProto,
  machineStatusToProto,
  metadataFromProto,
  metadataToProto,
} from "./core_mapping.ts";
import {
  discoveredVolumeFromProto,
  discoveredVolumeToProto,
  diskStatusFromProto,
  diskStatusToProto,
  mountStatusFromProto,
  mountStatusToProto,
  provisioningRecordFromProto,
  provisioningRecordToProto,
  volumeSpecFromProto,
  volumeSpecToProto,
  volumeStatusFromProto,
  volumeStatusToProto,
} from "./block_mapping.ts";
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
import { upgradeStatusFromProto, upgradeStatusToProto } from "./upgrade_mapping.ts";
import { secureBootStatusFromProto, secureBootStatusToProto } from "./firmware_mapping.ts";
import {
  kernelCmdlineStatusFromProto,
  kernelCmdlineStatusToProto,
} from "./kernel_cmdline_mapping.ts";
import { trustedRootsStatusFromProto, trustedRootsStatusToProto } from "./trust_mapping.ts";
import { extensionStatusFromProto, extensionStatusToProto } from "./extensions_mapping.ts";

/** The proto `oneof` case names of `Resource.spec`. */
type SpecCase = NonNullable<ProtoResource["spec"]["case"]>;

/** The proto message a spec case carries. */
type SpecValue<C extends SpecCase> = Extract<ProtoResource["spec"], { case: C }>["value"];

/** The TypeScript spec of one resource type. */
type SpecOf<K extends ResourceType> = MachineResourceOf<K>["spec"];

/** True only when A and B are the same type (not merely assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

/**
 * Each resource type's spec case is its name with a lower-case first letter.
 * This fails to compile when the catalog and the proto's `oneof` drift apart,
 * in either direction.
 */
const casesMatchCatalog: Equal<Capitalize<SpecCase>, ResourceType> = true;
void casesMatchCatalog;

/** Both directions of one resource type's spec conversion. */
interface SpecMapping<K extends ResourceType> {
  toProto(spec: SpecOf<K>): SpecValue<Uncapitalize<K>>;
  fromProto(value: SpecValue<Uncapitalize<K>>): SpecOf<K>;
}

/** Exhaustive: a resource type without an entry is a compile error. */
const SPEC_MAPPINGS: { [K in ResourceType]: SpecMapping<K> } = {
  MachineConfig: { toProto: machineConfigToProto, fromProto: machineConfigFromProto },
  ConfigStatus: { toProto: configStatusToProto, fromProto: configStatusFromProto },
  MachineStatus: { toProto: machineStatusToProto, fromProto: machineStatusFromProto },
  ControllerStatus: { toProto: controllerStatusToProto, fromProto: controllerStatusFromProto },
  LinkSpec: { toProto: networkToProto.linkSpec, fromProto: networkFromProto.linkSpec },
  AddressSpec: { toProto: networkToProto.addressSpec, fromProto: networkFromProto.addressSpec },
  RouteSpec: { toProto: networkToProto.routeSpec, fromProto: networkFromProto.routeSpec },
  HostnameSpec: { toProto: networkToProto.hostnameSpec, fromProto: networkFromProto.hostnameSpec },
  ResolverSpec: { toProto: networkToProto.resolverSpec, fromProto: networkFromProto.resolverSpec },
  LinkStatus: { toProto: networkToProto.linkStatus, fromProto: networkFromProto.linkStatus },
  AddressStatus: {
    toProto: networkToProto.addressStatus,
    fromProto: networkFromProto.addressStatus,
  },
  RouteStatus: { toProto: networkToProto.routeStatus, fromProto: networkFromProto.routeStatus },
  ResolverStatus: {
    toProto: networkToProto.resolverStatus,
    fromProto: networkFromProto.resolverStatus,
  },
  HostnameStatus: {
    toProto: networkToProto.hostnameStatus,
    fromProto: networkFromProto.hostnameStatus,
  },
  DhcpLease: { toProto: networkToProto.dhcpLease, fromProto: networkFromProto.dhcpLease },
  Dhcp6Lease: { toProto: networkToProto.dhcp6Lease, fromProto: networkFromProto.dhcp6Lease },
  ServiceSpec: { toProto: serviceSpecToProto, fromProto: serviceSpecFromProto },
  ServiceStatus: { toProto: serviceStatusToProto, fromProto: serviceStatusFromProto },
  RuntimeStatus: { toProto: runtimeStatusToProto, fromProto: runtimeStatusFromProto },
  TimeStatus: { toProto: timeStatusToProto, fromProto: timeStatusFromProto },
  KernelParamStatus: { toProto: kernelParamStatusToProto, fromProto: kernelParamStatusFromProto },
  KernelModuleStatus: {
    toProto: kernelModuleStatusToProto,
    fromProto: kernelModuleStatusFromProto,
  },
  KernelCmdlineStatus: {
    toProto: kernelCmdlineStatusToProto,
    fromProto: kernelCmdlineStatusFromProto,
  },
  DiskStatus: { toProto: diskStatusToProto, fromProto: diskStatusFromProto },
  DiscoveredVolume: { toProto: discoveredVolumeToProto, fromProto: discoveredVolumeFromProto },
  VolumeSpec: { toProto: volumeSpecToProto, fromProto: volumeSpecFromProto },
  VolumeStatus: { toProto: volumeStatusToProto, fromProto: volumeStatusFromProto },
  MountStatus: { toProto: mountStatusToProto, fromProto: mountStatusFromProto },
  ProvisioningRecord: {
    toProto: provisioningRecordToProto,
    fromProto: provisioningRecordFromProto,
  },
  UpgradeStatus: { toProto: upgradeStatusToProto, fromProto: upgradeStatusFromProto },
  SecureBootStatus: { toProto: secureBootStatusToProto, fromProto: secureBootStatusFromProto },
  TrustedRootsStatus: {
    toProto: trustedRootsStatusToProto,
    fromProto: trustedRootsStatusFromProto,
  },
  FirewallStatus: {
    toProto: networkToProto.firewallStatus,
    fromProto: networkFromProto.firewallStatus,
  },
  WireguardStatus: {
    toProto: networkToProto.wireguardStatus,
    fromProto: networkFromProto.wireguardStatus,
  },
  ExtensionStatus: { toProto: extensionStatusToProto, fromProto: extensionStatusFromProto },
};

/** The spec case of a resource type (`MachineConfig` -> `machineConfig`). */
function caseOf<K extends ResourceType>(type: K): Uncapitalize<K> {
  return (type.charAt(0).toLowerCase() + type.slice(1)) as Uncapitalize<K>;
}

/** The resource type of a spec case (`machineConfig` -> `MachineConfig`). */
function typeOfCase(c: SpecCase): ResourceType {
  return (c.charAt(0).toUpperCase() + c.slice(1)) as Capitalize<SpecCase>;
}

/**
 * What the store hands out for a type only known at run time: the same value
 * as a {@link MachineResource}, typed less precisely.
 */
export type AnyMachineResource = MachineResource | MachineResourceOf<ResourceType>;

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
  return convertOf(resource.metadata.type, resource as MachineResourceOf<ResourceType>);
}

function convertOf<K extends ResourceType>(type: K, resource: MachineResourceOf<K>): ProtoResource {
  const mapping: SpecMapping<K> | undefined = SPEC_MAPPINGS[type];
  if (!mapping) throw new TypeError(`Unhandled resource type: ${JSON.stringify(type)}`);
  const value = mapping.toProto(resource.spec as SpecOf<K>);
  // The pairing of case and value is what SpecMapping<K> guarantees; the
  // oneof union cannot see it through the generic K.
  const spec = { case: caseOf(type), value } as ProtoResource["spec"];
  return create(ResourceSchema, { metadata: metadataToProto(resource.metadata), spec });
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
  if (spec.case === undefined) {
    throw new ResourceMappingError("spec", `Resource ${m.namespace}/${m.type}/${m.id} has no spec`);
  }
  const type = typeOfCase(spec.case);
  if (!Object.hasOwn(SPEC_MAPPINGS, type)) {
    throw new TypeError(`Unhandled resource spec: ${JSON.stringify(spec)}`);
  }
  if (m.type !== type) {
    throw new ResourceMappingError(
      "spec",
      `Resource ${m.namespace}/${m.type}/${m.id} carries a ${type} spec`,
    );
  }
  return fromProtoOf(type, m, spec.value as SpecValue<Uncapitalize<ResourceType>>);
}

function fromProtoOf<K extends ResourceType>(
  type: K,
  m: NonNullable<ProtoResource["metadata"]>,
  value: SpecValue<Uncapitalize<K>>,
): MachineResource {
  const mapping: SpecMapping<K> = SPEC_MAPPINGS[type];
  return {
    metadata: metadataFromProto(m, type),
    spec: mapping.fromProto(value),
  } as MachineResource;
}
