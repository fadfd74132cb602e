/**
 * The one place where machined's TypeScript resources and the API's typed
 * proto messages meet. Both directions are exhaustive `switch` statements over
 * the closed catalog ending in `assertNever`, so adding a resource type to
 * resources/registry.ts fails type-checking here until it has a proto message.
 */
import { create } from "@bufbuild/protobuf";
import { type Resource as ProtoResource, ResourceSchema } from "../gen/machined/v1/resources_pb.ts";
import type { MachineResource, MachineResourceOf, ResourceType } from "../../resources/mod.ts";
import { assertNever } from "../../resources/mod.ts";
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
    case "DiskStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "diskStatus", value: diskStatusToProto(t.resource.spec) },
      });
    case "DiscoveredVolume":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "discoveredVolume", value: discoveredVolumeToProto(t.resource.spec) },
      });
    case "VolumeSpec":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "volumeSpec", value: volumeSpecToProto(t.resource.spec) },
      });
    case "VolumeStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "volumeStatus", value: volumeStatusToProto(t.resource.spec) },
      });
    case "MountStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "mountStatus", value: mountStatusToProto(t.resource.spec) },
      });
    case "ProvisioningRecord":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "provisioningRecord", value: provisioningRecordToProto(t.resource.spec) },
      });
    case "UpgradeStatus":
      return create(ResourceSchema, {
        metadata,
        spec: { case: "upgradeStatus", value: upgradeStatusToProto(t.resource.spec) },
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
    case "diskStatus":
      expect("DiskStatus");
      return {
        metadata: metadataFromProto(m, "DiskStatus"),
        spec: diskStatusFromProto(spec.value),
      };
    case "discoveredVolume":
      expect("DiscoveredVolume");
      return {
        metadata: metadataFromProto(m, "DiscoveredVolume"),
        spec: discoveredVolumeFromProto(spec.value),
      };
    case "volumeSpec":
      expect("VolumeSpec");
      return {
        metadata: metadataFromProto(m, "VolumeSpec"),
        spec: volumeSpecFromProto(spec.value),
      };
    case "volumeStatus":
      expect("VolumeStatus");
      return {
        metadata: metadataFromProto(m, "VolumeStatus"),
        spec: volumeStatusFromProto(spec.value),
      };
    case "mountStatus":
      expect("MountStatus");
      return {
        metadata: metadataFromProto(m, "MountStatus"),
        spec: mountStatusFromProto(spec.value),
      };
    case "provisioningRecord":
      expect("ProvisioningRecord");
      return {
        metadata: metadataFromProto(m, "ProvisioningRecord"),
        spec: provisioningRecordFromProto(spec.value),
      };
    case "upgradeStatus":
      expect("UpgradeStatus");
      return {
        metadata: metadataFromProto(m, "UpgradeStatus"),
        spec: upgradeStatusFromProto(spec.value),
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
