/**
 * `machine.network`: links, addresses, routes, resolvers and static host
 * entries. Cross-field rules (unique interface names, a route's `via` of the
 * same family as its `to`) are checked in `semantic_checks.ts`.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { dnsName, IpAddressText } from "./primitives.ts";
import { InterfaceName, linkEntries, type RouteSchema } from "./link_entries.ts";
import { BondSchema, BridgeSchema, VlanSchema } from "./network_links.ts";
import { FirewallSchema } from "./firewall.ts";
import { WireguardSchema } from "./wireguard.ts";

/** One network interface, matched by its kernel name. */
export const InterfaceSchema = mapping({
  name: v.pipe(
    InterfaceName,
    v.description("Kernel name of the link to configure."),
    v.examples(["eth0"]),
  ),
  ...linkEntries,
});

/** A static `/etc/hosts` entry. */
export const HostEntrySchema = mapping({
  ip: v.pipe(IpAddressText, v.description("Address the names resolve to.")),
  aliases: v.pipe(
    v.array(dnsName(253, "host name"), "expected a list of host names"),
    v.minLength(1, "aliases must list at least one name"),
    v.description("Names for `ip`."),
    v.examples([["registry.local"]]),
  ),
});

/** `machine.network`. */
export const NetworkSchema = mapping({
  interfaces: v.optional(
    v.pipe(
      v.array(InterfaceSchema, "expected a list of interfaces"),
      v.description("Links to configure. Links not listed are left as they are."),
    ),
    [],
  ),
  bonds: v.optional(
    v.pipe(
      v.array(BondSchema, "expected a list of bonds"),
      v.description(
        "Bonds machined creates, with their ports. A port is only enslaved: it never runs DHCP or holds addresses.",
      ),
    ),
    [],
  ),
  vlans: v.optional(
    v.pipe(
      v.array(VlanSchema, "expected a list of VLANs"),
      v.description("802.1Q VLANs machined creates on a link, a bond or a bridge."),
    ),
    [],
  ),
  bridges: v.optional(
    v.pipe(
      v.array(BridgeSchema, "expected a list of bridges"),
      v.description("Bridges machined creates, with their ports."),
    ),
    [],
  ),
  wireguard: v.optional(
    v.pipe(
      v.array(WireguardSchema, "expected a list of WireGuard interfaces"),
      v.description(
        'WireGuard interfaces machined creates, with their keys and peers (docs/network.md, "WireGuard").',
      ),
    ),
    [],
  ),
  nameservers: v.optional(
    v.pipe(
      v.array(IpAddressText, "expected a list of IP addresses"),
      v.maxLength(3, "at most 3 nameservers (the resolver ignores more)"),
      v.description("DNS resolvers, in order. Added to those learnt by DHCP."),
      v.examples([["1.1.1.1", "2606:4700:4700::1111"]]),
    ),
    [],
  ),
  search: v.optional(
    v.pipe(
      v.array(dnsName(253, "search domain"), "expected a list of domain names"),
      v.maxLength(6, "at most 6 search domains"),
      v.description("DNS search domains. `machine.domainname` is searched first when set."),
      v.examples([["example.org"]]),
    ),
    [],
  ),
  extra_hosts: v.optional(
    v.pipe(
      v.array(HostEntrySchema, "expected a list of host entries"),
      v.description("Static entries written to /etc/hosts after the node's own names."),
    ),
    [],
  ),
  firewall: v.optional(
    v.pipe(
      FirewallSchema,
      v.description(
        "The ingress firewall (nftables table `inet machined`). Omit for none: machined then removes its table and filters nothing.",
      ),
    ),
  ),
});

/** A parsed `machine.network` with defaults filled. */
export type NetworkConfig = v.InferOutput<typeof NetworkSchema>;
/** A parsed interface entry. */
export type InterfaceConfig = v.InferOutput<typeof InterfaceSchema>;
/** A parsed route; `to` is always a CIDR (`"default"` resolved). */
export type RouteConfig = v.InferOutput<typeof RouteSchema>;
export { isInterfaceName } from "./link_entries.ts";
