/**
 * `machine.network`: links, addresses, routes, resolvers and static host
 * entries. Cross-field rules (unique interface names, a route's `via` of the
 * same family as its `to`) are checked in `semantic_checks.ts`.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { dnsName, InterfaceCidr, intRange, IpAddressText, RouteDestination } from "./primitives.ts";
import { checkWithHint, quote } from "./hints.ts";
import { FirewallSchema } from "./firewall.ts";

/** Linux interface names: 1..15 bytes, no `/`, `:` or whitespace, not `.` or `..`. */
export function isInterfaceName(s: string): boolean {
  return /^[A-Za-z0-9_.@-]{1,15}$/.test(s) && s !== "." && s !== "..";
}

const InterfaceName = v.pipe(
  v.string("expected an interface name string"),
  checkWithHint(
    isInterfaceName,
    (issue) => `invalid interface name ${quote(issue.input)}`,
    () => "1..15 characters of A-Z, a-z, 0-9, '_', '-', '.', '@'",
  ),
  v.metadata({ docType: "interface name" }),
);

/** One static route through an interface; `to: default` becomes the family's `/0`. */
export const RouteSchema = v.pipe(
  mapping({
    to: v.pipe(
      RouteDestination,
      v.description(
        'Destination network. `"default"` means `0.0.0.0/0` or `::/0`, picked by the family of `via`. Host bits must be zero.',
      ),
      v.examples(["0.0.0.0/0", "10.1.0.0/16", "default"]),
    ),
    via: v.optional(
      v.pipe(
        IpAddressText,
        v.description(
          "Gateway address, of the same family as `to`. Omit for an on-link route.",
        ),
        v.examples(["10.0.0.1"]),
      ),
    ),
    metric: v.optional(
      v.pipe(
        intRange(0, 4294967295, "metric"),
        v.description("Route priority; lower wins."),
      ),
      1024,
    ),
  }),
  v.transform((r) => ({ ...r, to: r.to === "default" ? defaultRoute(r.via) : r.to })),
);

function defaultRoute(via: string | undefined): string {
  return via?.includes(":") ? "::/0" : "0.0.0.0/0";
}

/** One network interface, matched by its kernel name. */
export const InterfaceSchema = mapping({
  name: v.pipe(
    InterfaceName,
    v.description("Kernel name of the link to configure."),
    v.examples(["eth0"]),
  ),
  up: v.optional(
    v.pipe(v.boolean("expected true or false"), v.description("Bring the link up.")),
    true,
  ),
  mtu: v.optional(
    v.pipe(
      intRange(68, 65535, "mtu"),
      v.description("Link MTU in bytes. Omit to keep the driver's default."),
      v.examples([1500, 9000]),
    ),
  ),
  dhcp: v.optional(
    v.pipe(
      v.boolean("expected true or false"),
      v.description("Acquire an IPv4 address, routes and resolvers by DHCP."),
    ),
    false,
  ),
  addresses: v.optional(
    v.pipe(
      v.array(InterfaceCidr, "expected a list of address/prefix strings"),
      v.description("Static addresses with prefix length, IPv4 or IPv6."),
      v.examples([["10.0.0.2/24", "fd00::2/64"]]),
    ),
    [],
  ),
  routes: v.optional(
    v.pipe(
      v.array(RouteSchema, "expected a list of routes"),
      v.description("Static routes via this interface."),
    ),
    [],
  ),
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
