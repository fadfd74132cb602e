/**
 * The closed catalog of machined's resource types. Every type is listed once in
 * {@link ResourceSpecs}; every table that must handle all types is typed over
 * {@link ResourceType}, so adding a type fails type-checking until each handles it.
 */
import type { AnyResourceOf, Controller, ResourceOf, Store } from "../runtime/mod.ts";
import type { ResourceDescriptor } from "./descriptor.ts";
import { configStatusDescriptor, type ConfigStatusSpec } from "./config/config_status.ts";
import { machineConfigDescriptor, type MachineConfigSpec } from "./config/machine_config.ts";
import {
  controllerStatusDescriptor,
  type ControllerStatusSpec,
} from "./services/controller_status.ts";
import { machineStatusDescriptor, type MachineStatusSpec } from "./services/machine_status.ts";
import { runtimeStatusDescriptor, type RuntimeStatusSpec } from "./services/runtime_status.ts";
import { serviceSpecDescriptor, type ServiceSpecSpec } from "./services/service_spec.ts";
import { serviceStatusDescriptor, type ServiceStatusSpec } from "./services/service_status.ts";
import {
  addressSpecDescriptor,
  type AddressSpecSpec,
  addressStatusDescriptor,
  type AddressStatusSpec,
  dhcp6LeaseDescriptor,
  type Dhcp6LeaseSpec,
  dhcpLeaseDescriptor,
  type DhcpLeaseSpec,
  firewallStatusDescriptor,
  type FirewallStatusSpec,
  hostnameSpecDescriptor,
  type HostnameSpecSpec,
  hostnameStatusDescriptor,
  type HostnameStatusSpec,
  linkSpecDescriptor,
  type LinkSpecSpec,
  linkStatusDescriptor,
  type LinkStatusSpec,
  resolverSpecDescriptor,
  type ResolverSpecSpec,
  resolverStatusDescriptor,
  type ResolverStatusSpec,
  routeSpecDescriptor,
  type RouteSpecSpec,
  routeStatusDescriptor,
  type RouteStatusSpec,
  wireguardStatusDescriptor,
  type WireguardStatusSpec,
} from "./network/mod.ts";
import {
  discoveredVolumeDescriptor,
  type DiscoveredVolumeSpec,
  diskStatusDescriptor,
  type DiskStatusSpec,
  mountStatusDescriptor,
  type MountStatusSpec,
  provisioningRecordDescriptor,
  type ProvisioningRecordSpec,
  volumeSpecDescriptor,
  type VolumeSpecSpec,
  volumeStatusDescriptor,
  type VolumeStatusSpec,
} from "./block/mod.ts";
import { timeStatusDescriptor, type TimeStatusSpec } from "./time/mod.ts";
import {
  kernelCmdlineStatusDescriptor,
  type KernelCmdlineStatusSpec,
  kernelModuleStatusDescriptor,
  type KernelModuleStatusSpec,
  kernelParamStatusDescriptor,
  type KernelParamStatusSpec,
} from "./kernel/mod.ts";
import { upgradeStatusDescriptor, type UpgradeStatusSpec } from "./upgrade/mod.ts";
import { secureBootStatusDescriptor, type SecureBootStatusSpec } from "./firmware/mod.ts";
import { trustedRootsStatusDescriptor, type TrustedRootsStatusSpec } from "./trust/mod.ts";
import { extensionStatusDescriptor, type ExtensionStatusSpec } from "./extensions/mod.ts";

/** Resource type name → spec type: the whole catalog. */
export type ResourceSpecs = {
  MachineConfig: MachineConfigSpec;
  ConfigStatus: ConfigStatusSpec;
  MachineStatus: MachineStatusSpec;
  ControllerStatus: ControllerStatusSpec;
  ServiceSpec: ServiceSpecSpec;
  ServiceStatus: ServiceStatusSpec;
  RuntimeStatus: RuntimeStatusSpec;
  LinkSpec: LinkSpecSpec;
  AddressSpec: AddressSpecSpec;
  RouteSpec: RouteSpecSpec;
  HostnameSpec: HostnameSpecSpec;
  ResolverSpec: ResolverSpecSpec;
  LinkStatus: LinkStatusSpec;
  AddressStatus: AddressStatusSpec;
  RouteStatus: RouteStatusSpec;
  ResolverStatus: ResolverStatusSpec;
  HostnameStatus: HostnameStatusSpec;
  DhcpLease: DhcpLeaseSpec;
  Dhcp6Lease: Dhcp6LeaseSpec;
  TimeStatus: TimeStatusSpec;
  KernelParamStatus: KernelParamStatusSpec;
  KernelModuleStatus: KernelModuleStatusSpec;
  KernelCmdlineStatus: KernelCmdlineStatusSpec;
  DiskStatus: DiskStatusSpec;
  DiscoveredVolume: DiscoveredVolumeSpec;
  VolumeSpec: VolumeSpecSpec;
  VolumeStatus: VolumeStatusSpec;
  MountStatus: MountStatusSpec;
  ProvisioningRecord: ProvisioningRecordSpec;
  UpgradeStatus: UpgradeStatusSpec;
  SecureBootStatus: SecureBootStatusSpec;
  TrustedRootsStatus: TrustedRootsStatusSpec;
  FirewallStatus: FirewallStatusSpec;
  WireguardStatus: WireguardStatusSpec;
  ExtensionStatus: ExtensionStatusSpec;
};

/** Every resource type name. */
export type ResourceType = keyof ResourceSpecs;

/** machined's store. */
export type MachineStore = Store<ResourceSpecs>;
/** machined's controllers. */
export type MachineController = Controller<ResourceSpecs>;
/** A resource of a given type. */
export type MachineResourceOf<K extends ResourceType> = ResourceOf<ResourceSpecs, K>;
/** Any machined resource: a union discriminated by `metadata.type`. */
export type MachineResource = AnyResourceOf<ResourceSpecs>;

/** Descriptor of every type. Missing one is a type error. */
export const RESOURCE_DESCRIPTORS: {
  readonly [K in ResourceType]: ResourceDescriptor<K, ResourceSpecs[K]>;
} = {
  MachineConfig: machineConfigDescriptor,
  ConfigStatus: configStatusDescriptor,
  MachineStatus: machineStatusDescriptor,
  ControllerStatus: controllerStatusDescriptor,
  ServiceSpec: serviceSpecDescriptor,
  ServiceStatus: serviceStatusDescriptor,
  RuntimeStatus: runtimeStatusDescriptor,
  LinkSpec: linkSpecDescriptor,
  AddressSpec: addressSpecDescriptor,
  RouteSpec: routeSpecDescriptor,
  HostnameSpec: hostnameSpecDescriptor,
  ResolverSpec: resolverSpecDescriptor,
  LinkStatus: linkStatusDescriptor,
  AddressStatus: addressStatusDescriptor,
  RouteStatus: routeStatusDescriptor,
  ResolverStatus: resolverStatusDescriptor,
  HostnameStatus: hostnameStatusDescriptor,
  DhcpLease: dhcpLeaseDescriptor,
  Dhcp6Lease: dhcp6LeaseDescriptor,
  TimeStatus: timeStatusDescriptor,
  KernelParamStatus: kernelParamStatusDescriptor,
  KernelModuleStatus: kernelModuleStatusDescriptor,
  KernelCmdlineStatus: kernelCmdlineStatusDescriptor,
  DiskStatus: diskStatusDescriptor,
  DiscoveredVolume: discoveredVolumeDescriptor,
  VolumeSpec: volumeSpecDescriptor,
  VolumeStatus: volumeStatusDescriptor,
  MountStatus: mountStatusDescriptor,
  ProvisioningRecord: provisioningRecordDescriptor,
  UpgradeStatus: upgradeStatusDescriptor,
  SecureBootStatus: secureBootStatusDescriptor,
  TrustedRootsStatus: trustedRootsStatusDescriptor,
  FirewallStatus: firewallStatusDescriptor,
  WireguardStatus: wireguardStatusDescriptor,
  ExtensionStatus: extensionStatusDescriptor,
};

/** Every type name, in catalog order. */
export const RESOURCE_TYPES = Object.keys(RESOURCE_DESCRIPTORS) as ResourceType[];

/**
 * Resolves a user-typed name (`ServiceStatus`, `servicestatus`, `svc`, `services`)
 * to a type, case-insensitively; undefined when unknown.
 */
export function resolveResourceType(name: string): ResourceType | undefined {
  const wanted = name.toLowerCase();
  return RESOURCE_TYPES.find((t) =>
    t.toLowerCase() === wanted || RESOURCE_DESCRIPTORS[t].aliases.includes(wanted)
  );
}

/** Fails to compile when a switch over resource types misses a case. */
export function assertNever(value: never, what = "value"): never {
  throw new TypeError(`Unhandled ${what}: ${JSON.stringify(value)}`);
}
