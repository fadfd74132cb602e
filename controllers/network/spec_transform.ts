/**
 * The shape every config → spec controller shares: compute the wanted
 * resources of one output type from the inputs, apply each, and let the
 * runtime's owner GC tear down the rest (which the apply controllers see as
 * teardown, so they undo exactly what they did). These are joins (the config
 * plus every lease make each output), not one output per input, so they are
 * not runtime/transform.ts's transformController; they share its
 * apply-and-keep half, `applyWanted`.
 * @module
 */
import type { MachineController, ResourceSpecs, ResourceType } from "../../resources/mod.ts";
import {
  DHCP6_LEASE,
  type Dhcp6LeaseSpec,
  DHCP_LEASE,
  type DhcpLeaseSpec,
  lease6Bound,
  leaseBound,
  MACHINE_CONFIG,
  MACHINE_CONFIG_ID,
} from "../../resources/mod.ts";
import { applyWanted, type InputDecl, type ReconcileContext } from "../../runtime/mod.ts";
import { type MachineConfig, parseMachineConfig } from "../../config/mod.ts";

/** The namespace of every network resource. */
export const NETWORK_NAMESPACE = "network";

/** One wanted resource. */
export interface Wanted<K extends ResourceType> {
  id: string;
  spec: ResourceSpecs[K];
}

/** Definition of a spec controller. */
export interface SpecControllerDef<K extends ResourceType> {
  name: string;
  inputs: readonly InputDecl<ResourceSpecs>[];
  output: K;
  /** Pure given the context's reads: the resources that should exist. */
  build(ctx: ReconcileContext<ResourceSpecs>): Wanted<K>[];
}

/** A controller that keeps exactly `build(ctx)` as its outputs. */
export function specController<K extends ResourceType>(
  def: SpecControllerDef<K>,
): MachineController {
  return {
    name: def.name,
    inputs: def.inputs,
    outputs: [{ type: def.output, kind: "exclusive" }],
    async reconcile(ctx) {
      const wanted = def.build(ctx).map((w) => ({ namespace: NETWORK_NAMESPACE, ...w }));
      await applyWanted(ctx, def.output, wanted);
    },
  };
}

/** The MachineConfig input every config controller declares. */
export const CONFIG_INPUT: InputDecl<ResourceSpecs> = {
  type: MACHINE_CONFIG,
  kind: "weak",
  namespace: "config",
  id: MACHINE_CONFIG_ID,
};

/** The DhcpLease input of controllers that merge leases. */
export const LEASE_INPUT: InputDecl<ResourceSpecs> = { type: DHCP_LEASE, kind: "weak" };

/** The Dhcp6Lease input of controllers that merge DHCPv6 leases. */
export const LEASE6_INPUT: InputDecl<ResourceSpecs> = { type: DHCP6_LEASE, kind: "weak" };

/** The machine config in force, if any. */
export function machineConfig(ctx: ReconcileContext<ResourceSpecs>): MachineConfig | undefined {
  return ctx.find(MACHINE_CONFIG, "config", MACHINE_CONFIG_ID)?.spec.config;
}

/**
 * What the network controllers use while there is no valid config (the
 * `maintenance` stage): an empty network section, so `lo` comes up and, with
 * `autoDhcp`, the first physical link gets DHCP. A node in maintenance must
 * stay reachable: its way out is `machinectl apply-config` over the network.
 */
export const MAINTENANCE_CONFIG: MachineConfig = (() => {
  const r = parseMachineConfig(
    "version: v1alpha1\nmachine:\n  hostname: machined\n",
    "maintenance",
  );
  if (!r.ok) throw new Error("the built-in maintenance config does not parse");
  return r.config;
})();

/** The config the network controllers follow: the one in force, else {@link MAINTENANCE_CONFIG}. */
export function networkConfig(ctx: ReconcileContext<ResourceSpecs>): MachineConfig {
  return machineConfig(ctx) ?? MAINTENANCE_CONFIG;
}

/** Leases that carry an address, ordered by link name. */
export function boundLeases(ctx: ReconcileContext<ResourceSpecs>): DhcpLeaseSpec[] {
  return ctx.list(DHCP_LEASE, { namespace: NETWORK_NAMESPACE })
    .filter((r) => r.metadata.phase === "running" && leaseBound(r.spec))
    .map((r) => r.spec);
}

/** DHCPv6 leases that carry an address, ordered by link name. */
export function boundLeases6(ctx: ReconcileContext<ResourceSpecs>): Dhcp6LeaseSpec[] {
  return ctx.list(DHCP6_LEASE, { namespace: NETWORK_NAMESPACE })
    .filter((r) => r.metadata.phase === "running" && lease6Bound(r.spec))
    .map((r) => r.spec);
}
