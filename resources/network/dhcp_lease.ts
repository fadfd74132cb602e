/**
 * DhcpLease: the DHCPv4 client's state on one link and, once bound, what it
 * leased. The config controllers merge a bound lease's address, router, DNS
 * servers, domain and hostname into the specs (config values win).
 */
import type { ResourceDescriptor } from "../descriptor.ts";

/** Type name. */
export const DHCP_LEASE = "DhcpLease";

/** RFC 2131 client states. */
export type DhcpState = "selecting" | "requesting" | "bound" | "renewing" | "rebinding";

/** One link's lease; the id is the link name. */
export interface DhcpLeaseSpec {
  readonly link: string;
  readonly state: DhcpState;
  /** The rest is set once a lease was acknowledged (bound, renewing, rebinding). */
  readonly address?: string;
  readonly prefixLen?: number;
  readonly server?: string;
  readonly routers?: readonly string[];
  readonly dnsServers?: readonly string[];
  readonly domain?: string;
  readonly hostname?: string;
  readonly leaseSeconds?: number;
  /** ISO times. */
  readonly acquired?: string;
  readonly renewAt?: string;
  readonly rebindAt?: string;
  readonly expiresAt?: string;
}

/** True when the lease carries an address to use. */
export function leaseBound(l: DhcpLeaseSpec): boolean {
  return l.address !== undefined && l.prefixLen !== undefined &&
    (l.state === "bound" || l.state === "renewing" || l.state === "rebinding");
}

export const dhcpLeaseDescriptor: ResourceDescriptor<typeof DHCP_LEASE, DhcpLeaseSpec> = {
  type: DHCP_LEASE,
  namespace: "network",
  aliases: ["dhcplease", "dhcpleases", "dhcp", "leases"],
  description: "DHCPv4 client state and lease per link",
  columns: [
    { header: "STATE", value: (s) => s.state },
    {
      header: "ADDRESS",
      value: (s) => s.address === undefined ? "" : `${s.address}/${s.prefixLen}`,
    },
    { header: "ROUTER", value: (s) => (s.routers ?? [])[0] ?? "" },
    { header: "SERVER", value: (s) => s.server ?? "" },
    { header: "EXPIRES", value: (s) => s.expiresAt ?? "" },
  ],
};
