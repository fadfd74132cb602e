/**
 * ResolverConfigController: configured nameservers and search domains, then
 * those of bound DHCP and DHCPv6 leases (options 23 and 24) → ResolverSpec. Config comes first; the node's
 * domain is searched first. Inputs: MachineConfig, DhcpLease, Dhcp6Lease. Output:
 * ResolverSpec.
 * @module
 */
import type { Dhcp6LeaseSpec, DhcpLeaseSpec, MachineController } from "../../resources/mod.ts";
import { RESOLVER_ID, RESOLVER_SPEC, type ResolverSpecSpec } from "../../resources/mod.ts";
import type { MachineConfig } from "../../config/mod.ts";
import { canonicalIp } from "../../platform/network/mod.ts";
import {
  boundLeases,
  boundLeases6,
  CONFIG_INPUT,
  LEASE6_INPUT,
  LEASE_INPUT,
  machineConfig,
  specController,
} from "./spec_transform.ts";

/** glibc's MAXNS and MAXDNSRCH. */
const MAX_NAMESERVERS = 3;
const MAX_SEARCH = 6;

/** Builds the controller. */
export function resolverConfigController(): MachineController {
  return specController({
    name: "network.ResolverConfigController",
    inputs: [CONFIG_INPUT, LEASE_INPUT, LEASE6_INPUT],
    output: RESOLVER_SPEC,
    build(ctx) {
      const config = machineConfig(ctx);
      return config
        ? [{ id: RESOLVER_ID, spec: resolverSpec(config, boundLeases(ctx), boundLeases6(ctx)) }]
        : [];
    },
  });
}

/** Pure: the wanted resolvers, deduplicated and cut to the libc limits. */
export function resolverSpec(
  config: MachineConfig,
  leases: readonly DhcpLeaseSpec[],
  leases6: readonly Dhcp6LeaseSpec[] = [],
): ResolverSpecSpec {
  const net = config.machine.network;
  const nameservers = unique([
    ...net.nameservers.map((n) => canonicalIp(n) ?? n),
    ...leases.flatMap((l) => l.dnsServers ?? []),
    ...leases6.flatMap((l) => l.dnsServers ?? []),
  ]).slice(0, MAX_NAMESERVERS);
  const domain = config.machine.domainname ?? leases.find((l) => l.domain)?.domain;
  const search = unique([
    ...(domain ? [domain] : []),
    ...net.search,
    ...leases.flatMap((l) => l.domain ? [l.domain] : []),
    ...leases6.flatMap((l) => l.domains ?? []),
  ]).slice(0, MAX_SEARCH);
  return { nameservers, search };
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}
