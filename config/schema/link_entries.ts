/**
 * What every configured link shares, whether a NIC (`interfaces`) or a link
 * machined creates (bonds, VLANs, bridges): its name's rules, admin state,
 * MTU, DHCP, static addresses and routes.
 *
 * @module
 */
import * as v from "valibot";
import { mapping } from "./mapping.ts";
import { InterfaceCidr, intRange, IpAddressText, RouteDestination } from "./primitives.ts";
import { checkWithHint, quote } from "./hints.ts";

/** Linux interface names: 1..15 bytes, no `/`, `:` or whitespace, not `.` or `..`. */
export function isInterfaceName(s: string): boolean {
  return /^[A-Za-z0-9_.@-]{1,15}$/.test(s) && s !== "." && s !== "..";
}

/** A Linux interface name (see {@link isInterfaceName}). */
export const InterfaceName = v.pipe(
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

/** What every configured link has: admin state, MTU, DHCP, addresses, routes. */
export const linkEntries = {
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
  ipv6: v.optional(
    v.pipe(
      mapping({
        slaac: v.optional(
          v.pipe(
            v.boolean("expected true or false"),
            v.description(
              "Stateless autoconfiguration from router advertisements on this link only: true sets the link's `accept_ra` to 2 (accepted even when forwarding) and `autoconf` to 1, false sets both to 0, absent leaves the kernel's values. Never written through `default` or `all`.",
            ),
          ),
        ),
        dhcp: v.optional(
          v.pipe(
            v.boolean("expected true or false"),
            v.description(
              "Lease an IPv6 address (stateful DHCPv6, IA_NA) with DNS servers and search domains on this link. The address is a /128 (RFC 8415); the on-link prefix and default route come from router advertisements, so pair it with `slaac: true` or static routes.",
            ),
          ),
          false,
        ),
      }),
      v.description("IPv6 settings of this link."),
      v.examples([{ slaac: true, dhcp: false }, { slaac: true, dhcp: true }]),
    ),
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
};
