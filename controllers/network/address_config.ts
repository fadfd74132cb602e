/**
 * AddressConfigController: static addresses from the machine config plus the
 * address of each bound DHCP and DHCPv6 lease (a /128, origin `dhcp6`) → AddressSpec. A static address wins over
 * a leased one on the same link. Inputs: MachineConfig, DhcpLease, Dhcp6Lease. Output:
 * AddressSpec.
 * @module
 */
import type { Dhcp6LeaseSpec, DhcpLeaseSpec, MachineController } from "../../resources/mod.ts";
import { ADDRESS_SPEC, addressId, type AddressSpecSpec } from "../../resources/mod.ts";
import { configuredLinks, type MachineConfig } from "../../config/mod.ts";
import { parseCidr } from "../../ip/mod.ts";
import { formatIp } from "../../platform/network/mod.ts";
import {
  boundLeases,
  boundLeases6,
  CONFIG_INPUT,
  LEASE6_INPUT,
  LEASE_INPUT,
  networkConfig,
  specController,
} from "./spec_transform.ts";

/** Builds the controller. */
export function addressConfigController(): MachineController {
  return specController({
    name: "network.AddressConfigController",
    inputs: [CONFIG_INPUT, LEASE_INPUT, LEASE6_INPUT],
    output: ADDRESS_SPEC,
    build(ctx) {
      const config = networkConfig(ctx);
      return addressSpecs(config, boundLeases(ctx), boundLeases6(ctx)).map((spec) => ({
        id: addressId(spec.link, spec.address, spec.prefixLen),
        spec,
      }));
    },
  });
}

/** Pure: wanted addresses for a config and the bound leases. */
export function addressSpecs(
  config: MachineConfig,
  leases: readonly DhcpLeaseSpec[],
  leases6: readonly Dhcp6LeaseSpec[] = [],
): AddressSpecSpec[] {
  const out = new Map<string, AddressSpecSpec>();
  for (const i of configuredLinks(config.machine.network)) {
    for (const text of i.addresses) {
      const cidr = parseCidr(text);
      if (!cidr) continue; // the config schema rejects these
      const spec: AddressSpecSpec = {
        link: i.name,
        family: cidr.family === 4 ? "inet" : "inet6",
        address: formatIp(cidr.bytes),
        prefixLen: cidr.prefix,
        origin: "static",
      };
      out.set(addressId(spec.link, spec.address, spec.prefixLen), spec);
    }
  }
  for (const l of leases) {
    if (l.address === undefined || l.prefixLen === undefined) continue;
    const id = addressId(l.link, l.address, l.prefixLen);
    if ([...out.values()].some((s) => s.link === l.link && s.address === l.address)) continue;
    out.set(id, {
      link: l.link,
      family: "inet",
      address: l.address,
      prefixLen: l.prefixLen,
      origin: "dhcp",
    });
  }
  for (const l of leases6) {
    if (l.address === undefined || l.prefixLen === undefined) continue;
    if ([...out.values()].some((s) => s.link === l.link && s.address === l.address)) continue;
    out.set(addressId(l.link, l.address, l.prefixLen), {
      link: l.link,
      family: "inet6",
      address: l.address,
      prefixLen: l.prefixLen,
      origin: "dhcp6",
    });
  }
  return [...out.values()];
}
